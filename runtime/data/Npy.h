//===- Npy.h - NumPy .npy arrays --------------------------------*- C++ -*-===//
//
// Reads the .npy files that data sets and reference data come in (format
// versions 1-3, little-endian, C order). Problems are DatasetErrors naming
// the file.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_DATA_NPY_H
#define DPC_RUNTIME_DATA_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::data {

struct NpyArray {
  /// NumPy's type string without the byte order: "f4", "f8", "i4", "i8",
  /// "u1", ...
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t elementCount() const;
  /// The elements converted to T (float, double, int32_t, int64_t...).
  template <typename T> std::vector<T> as() const;
};

NpyArray readNpy(const std::string &path);

} // namespace dpc::data

#endif // DPC_RUNTIME_DATA_NPY_H
