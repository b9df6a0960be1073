//===- ReplayMain.cpp - a fuzz target as a plain program ------------------===//
//
// Without libFuzzer, each fuzz target links this main: it runs the target on
// every file named on the command line, or in a directory named there, as
// libFuzzer does when given files. ctest replays the seed and regression
// corpora this way on every build, the sanitizer build included; a finding
// crashes (or trips a sanitizer) exactly as it did under the fuzzer.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static void replay(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read the file\n", path.c_str());
    std::exit(1);
  }
  // A buffer of the input's exact size, as libFuzzer passes it, so that
  // ASan sees reads past the end.
  std::vector<uint8_t> bytes(fs::file_size(path));
  if (!in.read(reinterpret_cast<char *>(bytes.data()), bytes.size())) {
    std::fprintf(stderr, "%s: cannot read the file\n", path.c_str());
    std::exit(1);
  }
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|DIRECTORY...\n", argv[0]);
    return 2;
  }
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    std::vector<fs::path> files;
    if (fs::is_directory(arg)) {
      for (const fs::directory_entry &entry : fs::directory_iterator(arg))
        if (entry.is_regular_file() && entry.path().filename() != ".gitkeep")
          files.push_back(entry.path());
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(arg);
    }
    for (const fs::path &file : files) {
      std::fprintf(stderr, "replaying %s\n", file.c_str());
      replay(file);
      ++count;
    }
  }
  std::fprintf(stderr, "%zu inputs replayed, no finding\n", count);
  return 0;
}
