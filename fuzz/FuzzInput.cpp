//===- FuzzInput.cpp - fuzz inputs as the files the loaders read ----------===//

#include "fuzz/FuzzInput.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace {

void removeScratchDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(dpc::fuzz::getScratchDirectory(), ignored);
}

} // namespace

const std::string &dpc::fuzz::getScratchDirectory() {
  static const std::string directory = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/dpc-fuzz-XXXXXX";
    if (!mkdtemp(pattern.data())) {
      std::perror("dpc fuzz: cannot create a scratch directory");
      std::abort();
    }
    return pattern;
  }();
  static const bool registered = std::atexit(removeScratchDirectory) == 0;
  (void)registered;
  return directory;
}

std::string dpc::fuzz::writeScratchFile(const std::string &name,
                                        const uint8_t *data, size_t size) {
  std::string path = getScratchDirectory() + "/" + name;
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || (size && std::fwrite(data, 1, size, file) != size) ||
      std::fclose(file) != 0) {
    std::perror(("dpc fuzz: cannot write " + path).c_str());
    std::abort();
  }
  return path;
}

std::pair<std::string_view, std::string_view>
dpc::fuzz::splitFiles(const uint8_t *data, size_t size) {
  std::string_view all(reinterpret_cast<const char *>(data), size);
  size_t at = all.find(kFileSeparator);
  if (at == std::string_view::npos)
    return {all, {}};
  return {all.substr(0, at), all.substr(at + kFileSeparator.size())};
}

void dpc::fuzz::checkErrorLine(const std::string &message,
                               const std::string &path) {
  const char *problem = nullptr;
  if (message.empty())
    problem = "an empty error message";
  else if (message.find('\n') != std::string::npos)
    problem = "an error message of several lines";
  else if (!path.empty() && message.find(path) == std::string::npos)
    problem = "an error message that does not name the file";
  if (!problem)
    return;
  std::fprintf(stderr, "dpc fuzz: %s: \"%s\"\n", problem, message.c_str());
  std::abort();
}
