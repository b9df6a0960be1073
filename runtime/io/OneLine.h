//===- OneLine.h - error messages that stay one line ------------*- C++ -*-===//
//
// Error messages quote what a file says (tensor and node names, dtypes),
// and a hostile or damaged file can say anything: a newline would split the
// one-line error in two, a control sequence would reach the terminal. The
// error types of the loaders pass their messages through oneLine(), and so
// does the ONNX importer. Header-only: the compiler uses it too.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_IO_ONELINE_H
#define DPC_RUNTIME_IO_ONELINE_H

#include <string>
#include <string_view>

namespace dpc::io {

/// `text` with its control characters escaped ("\n", "\t", "\x1b"); other
/// bytes, UTF-8 included, as they are.
inline std::string oneLine(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string line;
  line.reserve(text.size());
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      line += c;
    } else if (c == '\n') {
      line += "\\n";
    } else if (c == '\t') {
      line += "\\t";
    } else if (c == '\r') {
      line += "\\r";
    } else {
      line += "\\x";
      line += kHex[byte >> 4];
      line += kHex[byte & 15];
    }
  }
  return line;
}

} // namespace dpc::io

#endif // DPC_RUNTIME_IO_ONELINE_H
