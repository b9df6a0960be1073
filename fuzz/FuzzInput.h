//===- FuzzInput.h - fuzz inputs as the files the loaders read --*- C++ -*-===//
//
// dpc's loaders take paths, and the fuzz targets feed them files: the same
// code a user's file goes through (opening, gzip, whole-file reads), not a
// parser split off for testing. The files live in one directory per process
// under $TMPDIR (tmpfs in CI), removed at exit.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FUZZ_FUZZINPUT_H
#define DPC_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace dpc::fuzz {

/// The process's scratch directory (created on first use).
const std::string &getScratchDirectory();

/// Writes `size` bytes to `name` in the scratch directory and returns its
/// path; aborts if it cannot (a broken harness, not a finding).
std::string writeScratchFile(const std::string &name, const uint8_t *data,
                             size_t size);

/// Inputs that stand for two files (images and labels) hold both, separated
/// by kFileSeparator; without one, the second file is empty.
inline constexpr std::string_view kFileSeparator = "\n--dpc-fuzz-next-file--\n";
std::pair<std::string_view, std::string_view> splitFiles(const uint8_t *data,
                                                         size_t size);

/// The contract for a refused input: one line that names the file (where
/// `path` is not empty). Aborts, so that the fuzzer records the input, if
/// `message` breaks it.
void checkErrorLine(const std::string &message, const std::string &path);

} // namespace dpc::fuzz

#endif // DPC_FUZZ_FUZZINPUT_H
