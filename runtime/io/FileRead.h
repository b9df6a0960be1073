//===- FileRead.h - whole files read with a clear error ---------*- C++ -*-===//
//
// Plans, checkpoints and .npy files are read whole through this: a
// directory, a missing or unreadable file, or one larger than the reader
// accepts is one line naming the file and the reason, where std::ifstream
// throws "basic_filebuf::underflow error reading the file" or reads an
// empty file.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_IO_FILEREAD_H
#define DPC_RUNTIME_IO_FILEREAD_H

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::io {

/// Reads all of `path` into `bytes`. Returns false with `error` set to
/// "PATH: cannot read the file (REASON)", or to "PATH: more than MAX
/// bytes, too large to read" for a file of more than `maxBytes` (checked
/// before anything is allocated for a regular file). `errorNumber` gets the
/// errno of a failed open or read (0 otherwise), for callers that say more
/// (a missing checkpoint).
bool readFile(const std::string &path, std::vector<uint8_t> &bytes,
              std::string &error, uint64_t maxBytes = UINT64_MAX,
              int *errorNumber = nullptr);

} // namespace dpc::io

#endif // DPC_RUNTIME_IO_FILEREAD_H
