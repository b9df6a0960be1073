//===- ImageTransforms.cpp - layouts, normalization, augmentation ---------===//

#include "runtime/data/ImageTransforms.h"

#include <algorithm>

using namespace dpc::data;

namespace {

/// SplitMix64's finalizer: a bijection of 64 bits whose outputs for
/// consecutive inputs look independent.
uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// A uniform integer in [0, span) from 32 random bits (Lemire's
/// multiply-shift; the bias is below span / 2^32).
int64_t below(uint32_t bits, int64_t span) {
  return int64_t((uint64_t(bits) * uint64_t(span)) >> 32);
}

/// Keeps augmentation draws apart from any other use of the seed.
constexpr uint64_t kAugmentationStream = 0x6175676D656E7421ull; // "augment!"

} // namespace

void dpc::data::transposeNhwcToNchw(const float *nhwc, float *nchw,
                                    int64_t count, int64_t channels,
                                    int64_t height, int64_t width) {
  int64_t plane = height * width;
  for (int64_t n = 0; n < count; ++n) {
    const float *source = nhwc + n * plane * channels;
    float *target = nchw + n * plane * channels;
    for (int64_t p = 0; p < plane; ++p)
      for (int64_t c = 0; c < channels; ++c)
        target[c * plane + p] = source[p * channels + c];
  }
}

void dpc::data::normalizeImages(float *images, int64_t count, int64_t channels,
                                int64_t planeSize,
                                const Normalization &normalization) {
  if (normalization.empty())
    return;
  for (int64_t n = 0; n < count; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      float mean = normalization.mean[c], deviation = normalization.std[c];
      float *plane = images + (n * channels + c) * planeSize;
      for (int64_t p = 0; p < planeSize; ++p)
        plane[p] = (plane[p] - mean) / deviation;
    }
}

AugmentationDraw dpc::data::drawAugmentation(const Augmentation &augmentation,
                                             uint64_t seed, int64_t epoch,
                                             int64_t sample) {
  uint64_t hash = mix(mix(mix(seed ^ kAugmentationStream) ^ uint64_t(epoch)) ^
                      uint64_t(sample));
  AugmentationDraw draw;
  int64_t span = 2 * augmentation.cropPadding + 1;
  draw.top = below(uint32_t(hash), span);
  draw.left = below(uint32_t(hash >> 32), span);
  draw.flip = augmentation.flip && (mix(hash) & 1);
  return draw;
}

void dpc::data::augmentImage(const float *source, float *target,
                             int64_t channels, int64_t height, int64_t width,
                             const Augmentation &augmentation,
                             const AugmentationDraw &draw) {
  int64_t shiftY = draw.top - augmentation.cropPadding;
  int64_t shiftX = draw.left - augmentation.cropPadding;
  // Target x reads source x + shiftX, or (width - 1 - x) + shiftX when
  // flipped; [begin, end) are the xs whose source is inside the image.
  int64_t begin = std::clamp<int64_t>(draw.flip ? shiftX : -shiftX, 0, width);
  int64_t end = std::clamp<int64_t>(draw.flip ? width + shiftX : width - shiftX,
                                    begin, width);
  for (int64_t c = 0; c < channels; ++c) {
    float fill = augmentation.fill.empty() ? 0.0f : augmentation.fill[c];
    const float *plane = source + c * height * width;
    for (int64_t y = 0; y < height; ++y) {
      int64_t sourceY = y + shiftY;
      float *row = target + (c * height + y) * width;
      if (sourceY < 0 || sourceY >= height) {
        std::fill(row, row + width, fill);
        continue;
      }
      const float *sourceRow = plane + sourceY * width;
      std::fill(row, row + begin, fill);
      if (draw.flip)
        for (int64_t x = begin; x < end; ++x)
          row[x] = sourceRow[width - 1 - x + shiftX];
      else
        std::copy(sourceRow + begin + shiftX, sourceRow + end + shiftX,
                  row + begin);
      std::fill(row + end, row + width, fill);
    }
  }
}
