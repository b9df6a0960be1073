//===- FileWrite.cpp - writes that fail loudly ----------------------------===//

#include "runtime/io/FileWrite.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dpc::io {
namespace {

bool fail(const std::string &path, int error, std::string &message) {
  message = path + ": cannot write the file (" + std::strerror(error) + ")";
  return false;
}

/// Writes all of `data` to `fd`; the errno of the failure, or 0.
int writeAll(int fd, const void *data, size_t size) {
  const auto *bytes = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0) // no progress and no reason: as good as full
      return ENOSPC;
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

/// A device, a pipe or a terminal: written in place (there is nothing to
/// rename over, and renaming over /dev/stdout would replace it).
bool isSpecialFile(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
}

} // namespace

bool writeFileAtomically(const std::string &path, const void *data, size_t size,
                         std::string &error) {
  if (isSpecialFile(path)) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return fail(path, errno, error);
    int status = writeAll(fd, data, size);
    if (::close(fd) != 0 && status == 0)
      status = errno;
    return status == 0 || fail(path, status, error);
  }
  std::string temporary = path + ".tmp";
  int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail(path, errno, error);
  // fsync before the rename: on a full disk, delayed allocation may only
  // fail there, and the rename must never publish a short file.
  int status = writeAll(fd, data, size);
  if (status == 0 && ::fsync(fd) != 0)
    status = errno;
  if (::close(fd) != 0 && status == 0)
    status = errno;
  if (status == 0 && ::rename(temporary.c_str(), path.c_str()) != 0)
    status = errno;
  if (status != 0) {
    ::unlink(temporary.c_str());
    return fail(path, status, error);
  }
  // Make the rename itself durable (best effort: some file systems refuse
  // to sync a directory).
  size_t slash = path.find_last_of('/');
  std::string directory = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  int dirFd = ::open(directory.c_str(), O_RDONLY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
  return true;
}

AppendFile::~AppendFile() {
  if (fd >= 0)
    ::close(fd);
}

bool AppendFile::open(const std::string &newPath, std::string &error) {
  if (fd >= 0)
    ::close(fd);
  path = newPath;
  written = 0;
  fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail(path, errno, error);
  struct stat status;
  regular = ::fstat(fd, &status) == 0 && S_ISREG(status.st_mode);
  return true;
}

bool AppendFile::append(const std::string &text, std::string &error) {
  if (fd < 0)
    return fail(path, EBADF, error);
  int status = writeAll(fd, text.data(), text.size());
  if (status == 0) {
    written += text.size();
    return true;
  }
  // Keep only whole appends, and no file at all where none succeeded: a
  // half line or an empty file would read as metrics that are not there.
  if (regular) {
    if (written == 0) {
      ::close(fd);
      fd = -1;
      ::unlink(path.c_str());
    } else if (::ftruncate(fd, static_cast<off_t>(written)) != 0) {
      // The failure reported below is the one that matters.
    }
  }
  return fail(path, status, error);
}

} // namespace dpc::io
