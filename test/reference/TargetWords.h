//===- TargetWords.h - a labels.npy as a plan's labels input ----*- C++ -*-===//
//
// The reference tools bind labels.npy to a plan's "labels" input as it
// lies: [N, ...] int32 classes, or float targets (an 'f' dtype: a
// regression's or a multi-label model's) as their 4-byte words.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TEST_REFERENCE_TARGETWORDS_H
#define DPC_TEST_REFERENCE_TARGETWORDS_H

#include "runtime/data/Npy.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace dpc::reference {

inline std::vector<int32_t> readTargetWords(const std::string &path) {
  data::NpyArray array = data::readNpy(path);
  if (array.dtype.empty() || array.dtype[0] != 'f')
    return array.as<int32_t>();
  std::vector<float> values = array.as<float>();
  std::vector<int32_t> words(values.size());
  std::memcpy(words.data(), values.data(), values.size() * sizeof(float));
  return words;
}

} // namespace dpc::reference

#endif // DPC_TEST_REFERENCE_TARGETWORDS_H
