//===- Dataset.h - image classification data sets --------------*- C++ -*-===//
//
// Loads an image data set (IDX files, gzipped or not, as Fashion-MNIST and
// MNIST ship) into memory as float images and int32 labels. Every problem
// with the files is reported as a DatasetError whose message is one line
// naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_DATA_DATASET_H
#define DPC_RUNTIME_DATA_DATASET_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpc::data {

struct DatasetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Images as float NCHW (C = 1 for IDX) and their labels.
struct Dataset {
  int64_t count = 0;
  int64_t channels = 0, height = 0, width = 0;
  std::vector<float> images; // count * channels * height * width
  std::vector<int32_t> labels;
  int32_t numClasses = 0; // max label + 1

  int64_t imageSize() const { return channels * height * width; }
};

/// How raw bytes become floats: x / 255, then (x - mean) / std.
struct Normalization {
  float mean = 0.0f;
  float std = 1.0f;
};

/// Reads an IDX image file (magic 0x00000803, uint8, [N, H, W]) and its
/// label file (0x00000801, uint8, [N]); either may be gzip-compressed.
Dataset loadIdx(const std::string &imagesPath, const std::string &labelsPath,
                const Normalization &normalization = {});

/// Reads an .npy image array ([N, H, W] or [N, C, H, W]; uint8 pixels are
/// scaled by 1/255, floats taken as they are, then normalized) and an .npy
/// array of N integer labels. Refuses NaN or infinite pixels and labels
/// that are negative or do not fit int32, naming the first one's index.
Dataset loadNpy(const std::string &imagesPath, const std::string &labelsPath,
                const Normalization &normalization = {});

/// The train or test split of Fashion-MNIST in `directory` (Debian's
/// dataset-fashion-mnist installs it in kFashionMnistDirectory).
Dataset loadFashionMnist(const std::string &directory, bool train,
                         const Normalization &normalization = {});

inline constexpr const char *kFashionMnistDirectory =
    "/usr/share/datasets/fashion-mnist";

/// Checks that every label of `dataset` (read from `path`) is below the
/// plan's `numClasses`, naming the first that is not and its index.
void checkLabels(const Dataset &dataset, const std::string &path,
                 int64_t numClasses);

/// Checks that `dataset` holds images of the shape a plan was compiled for.
void checkImageShape(const Dataset &dataset, const std::string &name,
                     int64_t channels, int64_t height, int64_t width);

} // namespace dpc::data

#endif // DPC_RUNTIME_DATA_DATASET_H
