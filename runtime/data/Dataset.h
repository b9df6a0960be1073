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

#include "runtime/data/DatasetError.h"
#include "runtime/data/ImageTransforms.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dpc::data {

/// One more input of a model with several: `count` samples of `size`
/// floats each (images in the plan's form, or token ids), row for row with
/// the data set's images.
struct ExtraInput {
  int64_t size = 0;
  std::vector<float> values;
};

/// What a sample's targets are, as the plan's labels input takes them:
/// one class index (classification), a class per token or per pixel
/// (`sample` [T] or [H, W]), or floats of any shape (a regression's, a
/// multi-label model's). Class targets equal to `ignoreIndex` count for
/// nothing (PyTorch's ignore_index).
struct TargetForm {
  std::vector<int64_t> sample; // dims of one sample's targets; empty: one
  bool isFloat = false;
  int64_t classes = 0; // class targets: the plan's count (0: unchecked)
  std::optional<int64_t> ignoreIndex;

  /// Targets per sample.
  int64_t size() const;
  /// "integer [N, 4]", the form a targets file must have.
  std::string describe() const;
};

/// Images as float NCHW (C = 1 for IDX) and their targets.
struct Dataset {
  int64_t count = 0;
  int64_t channels = 0, height = 0, width = 0;
  std::vector<float> images; // count * channels * height * width
  /// targets.size() targets per sample, each a 4-byte word: an int32
  /// class index, or a float's bits where targets.isFloat (the plan's
  /// labels input is bound as it lies).
  std::vector<int32_t> labels;
  TargetForm targets;
  int32_t numClasses = 0; // max class target + 1
  /// A model with several inputs: its second, third, ... inputs' samples.
  std::vector<ExtraInput> extras;

  int64_t imageSize() const { return channels * height * width; }
};

/// How a file's images become the plan's: the sample shape [C, H, W] the
/// plan expects (empty: take the file's own, NCHW), the layout of 4-D
/// files, and the normalization (one mean and std per channel).
struct ImageFormat {
  std::vector<int64_t> sample;
  ImageLayout layout = ImageLayout::Auto;
  Normalization normalization;
  /// The targets the plan takes (a labels file must have this form).
  TargetForm targets;
};

/// Reads an IDX image file (magic 0x00000803, uint8, [N, H, W]) and its
/// label file (0x00000801, uint8, [N]); either may be gzip-compressed.
/// Pixels are scaled to [0, 1], then normalized.
Dataset loadIdx(const std::string &imagesPath, const std::string &labelsPath,
                const ImageFormat &format = {});

/// Reads an .npy image array ([N, H, W], [N, C, H, W] or [N, H, W, C]:
/// the format's layout, or the one that matches its sample shape; uint8
/// pixels are scaled to [0, 1], any other type taken as it is, then
/// normalized) and an .npy array of targets of the format's TargetForm
/// ([N] integer labels by default). Refuses NaN or infinite pixels and
/// float targets, a targets file of another shape or type, and class
/// targets that are negative (but the ignore index) or do not fit int32,
/// naming the first one's index.
Dataset loadNpy(const std::string &imagesPath, const std::string &labelsPath,
                const ImageFormat &format = {});

/// Reads an .npy image array as loadNpy does, with no labels (each 0).
Dataset loadNpyImages(const std::string &imagesPath,
                      const ImageFormat &format = {});

/// The train or test split of Fashion-MNIST in `directory` (Debian's
/// dataset-fashion-mnist installs it in kFashionMnistDirectory).
Dataset loadFashionMnist(const std::string &directory, bool train,
                         const ImageFormat &format = {});

inline constexpr const char *kFashionMnistDirectory =
    "/usr/share/datasets/fashion-mnist";

/// Keeps the first `count` samples (all if count < 0 or beyond the end).
void keepFirst(Dataset &dataset, int64_t count);

/// Moves the last `count` samples of `dataset` into a data set of their
/// own, in order.
Dataset splitOffLast(Dataset &dataset, int64_t count);

/// Checks that every class target of `dataset` (read from `path`) but the
/// ignore index is below the plan's `numClasses`, naming the first that is
/// not and its index.
void checkLabels(const Dataset &dataset, const std::string &path,
                 int64_t numClasses);

/// Checks that `dataset` holds images of the shape a plan was compiled for.
void checkImageShape(const Dataset &dataset, const std::string &name,
                     int64_t channels, int64_t height, int64_t width);

} // namespace dpc::data

#endif // DPC_RUNTIME_DATA_DATASET_H
