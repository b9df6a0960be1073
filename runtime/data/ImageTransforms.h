//===- ImageTransforms.h - layouts, normalization, augmentation -*- C++ -*-===//
//
// What happens to an image between the file and the plan's NCHW f32 input:
// a layout change (NHWC files), the pixel rule (uint8 to [0, 1]), the
// per-channel normalization, and for training the CIFAR recipe's
// augmentation (a random crop from the image padded with zeros, and a
// horizontal flip).
//
// The pixel rule and the normalization compute in f32 exactly as
// torchvision's ToTensor and Normalize do, so data normalized beforehand in
// PyTorch or NumPy (float32) and data normalized here are the same bits.
//
// Augmentation is drawn from a counter-based hash of (seed, epoch, sample):
// no generator state, so every device and every rank draws the same crop
// and flip for a sample whatever batches or rows it assembles, and a run
// resumed mid-epoch draws what an uninterrupted one would.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_DATA_IMAGETRANSFORMS_H
#define DPC_RUNTIME_DATA_IMAGETRANSFORMS_H

#include <cstdint>
#include <vector>

namespace dpc::data {

/// How a file's 4-D images are laid out. Auto: whichever of NCHW and NHWC
/// matches the plan's sample shape, when exactly one does.
enum class ImageLayout { Auto, NCHW, NHWC };

/// Per-channel (x - mean[c]) / std[c]; empty: none.
struct Normalization {
  std::vector<float> mean, std;
  bool empty() const { return mean.empty(); }
};

/// A uint8 pixel as a float in [0, 1]: ToTensor's x / 255 in f32.
inline float scalePixel(uint8_t value) { return float(value) / 255.0f; }

/// Reorders `count` images from [H, W, C] to [C, H, W].
void transposeNhwcToNchw(const float *nhwc, float *nchw, int64_t count,
                         int64_t channels, int64_t height, int64_t width);

/// Normalizes `count` NCHW images in place; `normalization` has one mean
/// and std per channel.
void normalizeImages(float *images, int64_t count, int64_t channels,
                     int64_t planeSize, const Normalization &normalization);

/// The training-time augmentation, `--augment crop=PAD,flip`.
struct Augmentation {
  int64_t cropPadding = 0; // 0: no crop
  bool flip = false;
  /// Per channel, the value a padding pixel has: a zero pixel normalized,
  /// as torchvision pads before it normalizes. Empty: 0.
  std::vector<float> fill;

  bool enabled() const { return cropPadding > 0 || flip; }
};

/// One sample's draw: the crop's top-left corner in the padded image
/// (each in [0, 2 * cropPadding]) and whether to mirror it.
struct AugmentationDraw {
  int64_t top = 0, left = 0;
  bool flip = false;
};

/// The draw of sample `sample` (its index in the data set) in epoch
/// `epoch`: a pure function of its arguments.
AugmentationDraw drawAugmentation(const Augmentation &augmentation,
                                  uint64_t seed, int64_t epoch, int64_t sample);

/// Writes the augmented [C, H, W] image `source` to `target` (the same
/// size): the crop of the padded image at the draw's corner, then the flip.
void augmentImage(const float *source, float *target, int64_t channels,
                  int64_t height, int64_t width,
                  const Augmentation &augmentation,
                  const AugmentationDraw &draw);

} // namespace dpc::data

#endif // DPC_RUNTIME_DATA_IMAGETRANSFORMS_H
