//===- ByteSize.h - sizes as users write them -------------------*- C++ -*-===//
//
// Header-only, so that the compiler (--remat=budget=SIZE) and the runtime
// (DPC_DEVICE_MEMORY) read sizes the same way without linking each other.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_BYTESIZE_H
#define DPC_RUNTIME_PLAN_BYTESIZE_H

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <strings.h>
#include <utility>

namespace dpc::plan {

/// Parses "1.5GiB", "300MiB", "64KiB", "2GB", "1e6" or "4096" (bytes): the
/// binary suffixes (and K, M, G) are powers of 1024, KB/MB/GB/TB of 1000.
inline std::optional<int64_t> parseByteSize(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.pop_back();
  static const std::pair<const char *, double> units[] = {
      {"KiB", 1024.0},       {"MiB", 1048576.0},
      {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"KB", 1e3},           {"MB", 1e6},
      {"GB", 1e9},           {"TB", 1e12},
      {"K", 1024.0},         {"M", 1048576.0},
      {"G", 1073741824.0},   {"B", 1.0}};
  double scale = 1.0;
  for (auto [suffix, factor] : units) {
    size_t n = std::char_traits<char>::length(suffix);
    if (text.size() > n &&
        strcasecmp(text.c_str() + text.size() - n, suffix) == 0) {
      text.resize(text.size() - n);
      scale = factor;
      break;
    }
  }
  char *end = nullptr;
  double number = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' ||
      !std::isfinite(number) || number <= 0 || number * scale > 9.2e18)
    return std::nullopt;
  return static_cast<int64_t>(number * scale);
}

} // namespace dpc::plan

#endif // DPC_RUNTIME_PLAN_BYTESIZE_H
