//===- FileRead.cpp - whole files read with a clear error -----------------===//

#include "runtime/io/FileRead.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace dpc::io {

bool readFile(const std::string &path, std::vector<uint8_t> &bytes,
              std::string &error, uint64_t maxBytes, int *errorNumber) {
  auto failWith = [&](int number) {
    if (errorNumber)
      *errorNumber = number;
    error = path + ": cannot read the file (" + std::strerror(number) + ")";
    return false;
  };
  auto tooLarge = [&] {
    error = path + ": more than " + std::to_string(maxBytes) +
            " bytes, too large to read";
    return false;
  };
  if (errorNumber)
    *errorNumber = 0;
  bytes.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return failWith(errno);
  struct stat info;
  if (::fstat(fd, &info) != 0 || S_ISDIR(info.st_mode)) {
    int number = S_ISDIR(info.st_mode) ? EISDIR : errno;
    ::close(fd);
    return failWith(number);
  }
  // A regular file's size is known: refused or reserved at once. Other
  // files (pipes, /dev/stdin) grow as they are read.
  if (S_ISREG(info.st_mode)) {
    if (uint64_t(info.st_size) > maxBytes) {
      ::close(fd);
      return tooLarge();
    }
    try {
      bytes.reserve(size_t(info.st_size));
    } catch (const std::bad_alloc &) {
      ::close(fd);
      error = path + ": out of memory reading its " +
              std::to_string(info.st_size) + " bytes";
      return false;
    }
  }
  uint8_t chunk[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int number = errno;
      ::close(fd);
      return failWith(number);
    }
    if (n == 0)
      break;
    if (bytes.size() + size_t(n) > maxBytes) {
      ::close(fd);
      return tooLarge();
    }
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  ::close(fd);
  return true;
}

} // namespace dpc::io
