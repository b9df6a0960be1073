//===- FileWrite.h - writes that fail loudly --------------------*- C++ -*-===//
//
// Every file dpc writes (plans, checkpoints, metrics, plots, traces,
// predictions, exports) goes through these, so that a full or read-only
// disk is one line naming the file and the reason instead of a truncated
// file and exit status 0. Without exceptions, so that the compiler (built
// with -fno-exceptions) shares them: failures come back as that line.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_IO_FILEWRITE_H
#define DPC_RUNTIME_IO_FILEWRITE_H

#include <cstddef>
#include <string>

namespace dpc::io {

/// Writes `size` bytes to `path` atomically: into `path`.tmp, fsync, rename
/// over `path`, fsync of the directory, so that a reader (or a crash) sees
/// the old file or the new one. The temporary file is removed if any of it
/// fails. A `path` that exists and is not a regular file (/dev/stdout, a
/// pipe) is written in place. Returns false with `error` set to
/// "PATH: cannot write the file (REASON)".
bool writeFileAtomically(const std::string &path, const void *data, size_t size,
                         std::string &error);
inline bool writeFileAtomically(const std::string &path,
                                const std::string &text, std::string &error) {
  return writeFileAtomically(path, text.data(), text.size(), error);
}

/// A file written a piece at a time (metrics, one line per epoch): each
/// append reaches the kernel at once, so that a failure is seen where it
/// happens and a crash keeps what was appended.
class AppendFile {
public:
  AppendFile() = default;
  AppendFile(const AppendFile &) = delete;
  AppendFile &operator=(const AppendFile &) = delete;
  ~AppendFile();

  /// Creates or truncates `path`; false with `error` set as above.
  bool open(const std::string &path, std::string &error);
  /// Appends `text`; false with `error` set as above. A regular file keeps
  /// only the appends that succeeded, and is removed if none did.
  bool append(const std::string &text, std::string &error);
  bool isOpen() const { return fd >= 0; }

private:
  std::string path;
  int fd = -1;
  bool regular = false; // a regular file (not /dev/stdout, a pipe)
  size_t written = 0;   // bytes of the appends that succeeded
};

} // namespace dpc::io

#endif // DPC_RUNTIME_IO_FILEWRITE_H
