//===- NpyWriter.h - .npy and .npz files for NumPy and PyTorch --*- C++ -*-===//
//
// What `dpc predict` and `dpc export` write: NumPy's .npy format 1.0 (C
// order, little-endian) and .npz archives of them (an uncompressed ZIP, as
// numpy.savez writes), so that numpy.load reads them.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_NPYWRITER_H
#define DPC_RUNTIME_TRAIN_NPYWRITER_H

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::train {

/// The bytes of an .npy file holding `data` (`descr` is NumPy's type
/// string, e.g. "<f4", "<i8").
std::vector<uint8_t> encodeNpy(const std::string &descr,
                               const std::vector<int64_t> &shape,
                               const void *data, size_t bytes);

/// One array of an .npz archive: stored as "<name>.npy".
struct NpzEntry {
  std::string name;
  std::vector<uint8_t> npy; // from encodeNpy
};

/// The bytes of an .npz archive of `entries` (an uncompressed ZIP).
std::vector<uint8_t> encodeNpz(const std::vector<NpzEntry> &entries);

/// Writes `bytes` to `path` through a temporary file and a rename; throws
/// RunError naming `path`.
void writeFileAtomically(const std::string &path,
                         const std::vector<uint8_t> &bytes);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_NPYWRITER_H
