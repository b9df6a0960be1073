//===- ImageTransformsTest.cpp - layouts, normalization, augmentation -----===//
//
// Each transform against a naive reference written from its definition.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/ImageTransforms.h"
#include "runtime/data/BatchLoader.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <set>

using namespace dpc::data;

namespace {

std::vector<float> randomImages(int64_t size, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> values(size);
  for (float &x : values)
    x = uniform(random);
  return values;
}

TEST(ImageTransformsTest, TransposeIsNhwcIndexedAsNchw) {
  const int64_t n = 2, c = 3, h = 4, w = 5;
  std::vector<float> nhwc = randomImages(n * h * w * c, 1);
  std::vector<float> nchw(nhwc.size());
  transposeNhwcToNchw(nhwc.data(), nchw.data(), n, c, h, w);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          ASSERT_EQ(nchw[((i * c + k) * h + y) * w + x],
                    nhwc[((i * h + y) * w + x) * c + k]);
}

TEST(ImageTransformsTest, NormalizeIsPerChannelInF32) {
  const int64_t n = 2, c = 3, plane = 7;
  std::vector<float> images = randomImages(n * c * plane, 2);
  std::vector<float> original = images;
  Normalization normalization{{0.4914f, 0.4822f, 0.4465f},
                              {0.2470f, 0.2435f, 0.2616f}};
  normalizeImages(images.data(), n, c, plane, normalization);
  for (int64_t i = 0; i < n * c * plane; ++i) {
    int64_t k = (i / plane) % c;
    // torchvision's Normalize: x.sub_(mean).div_(std), in f32.
    float expected =
        (original[i] - normalization.mean[k]) / normalization.std[k];
    ASSERT_EQ(images[i], expected) << i;
  }
  normalizeImages(images.data(), n, c, plane, Normalization{});
  EXPECT_EQ(images[0], (original[0] - 0.4914f) / 0.2470f);
}

TEST(ImageTransformsTest, UInt8PixelsAreToTensorsDivision) {
  for (int v = 0; v < 256; ++v)
    ASSERT_EQ(scalePixel(uint8_t(v)), float(v) / 255.0f);
  EXPECT_EQ(scalePixel(0), 0.0f);
  EXPECT_EQ(scalePixel(255), 1.0f);
}

/// The CIFAR recipe written out: pad every side with `fill`, take the
/// [H, W] window at (top, left), mirror it left to right if asked.
std::vector<float> referenceAugment(const std::vector<float> &image, int64_t c,
                                    int64_t h, int64_t w, int64_t pad,
                                    const std::vector<float> &fill,
                                    const AugmentationDraw &draw) {
  int64_t ph = h + 2 * pad, pw = w + 2 * pad;
  std::vector<float> padded(c * ph * pw);
  for (int64_t k = 0; k < c; ++k)
    for (int64_t y = 0; y < ph; ++y)
      for (int64_t x = 0; x < pw; ++x) {
        bool inside = y >= pad && y < pad + h && x >= pad && x < pad + w;
        padded[(k * ph + y) * pw + x] =
            inside ? image[(k * h + y - pad) * w + x - pad] : fill[k];
      }
  std::vector<float> cropped(c * h * w);
  for (int64_t k = 0; k < c; ++k)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        cropped[(k * h + y) * w + x] =
            padded[(k * ph + y + draw.top) * pw + x + draw.left];
  if (!draw.flip)
    return cropped;
  std::vector<float> flipped(cropped.size());
  for (int64_t k = 0; k < c; ++k)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        flipped[(k * h + y) * w + x] = cropped[(k * h + y) * w + w - 1 - x];
  return flipped;
}

TEST(ImageTransformsTest, AugmentIsPadCropFlipForEveryDraw) {
  const int64_t c = 3, h = 5, w = 4, pad = 2;
  std::vector<float> image = randomImages(c * h * w, 3);
  Augmentation augmentation{pad, true, {-1.5f, 0.25f, 9.0f}};
  std::vector<float> out(image.size());
  for (int64_t top = 0; top <= 2 * pad; ++top)
    for (int64_t left = 0; left <= 2 * pad; ++left)
      for (bool flip : {false, true}) {
        AugmentationDraw draw{top, left, flip};
        augmentImage(image.data(), out.data(), c, h, w, augmentation, draw);
        ASSERT_EQ(
            out, referenceAugment(image, c, h, w, pad, augmentation.fill, draw))
            << top << " " << left << " " << flip;
      }
  // The centre without a flip is the image itself; without a fill, the
  // padding is 0.
  augmentImage(image.data(), out.data(), c, h, w, augmentation,
               {pad, pad, false});
  EXPECT_EQ(out, image);
  Augmentation zeros{pad, false, {}};
  augmentImage(image.data(), out.data(), c, h, w, zeros, {0, 0, false});
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[(2 * w) + 2], image[0]);
}

TEST(ImageTransformsTest, DrawsArePureAndCoverEveryOffset) {
  Augmentation augmentation{4, true, {}};
  std::set<int64_t> tops, lefts;
  int flips = 0, changedByEpoch = 0, changedBySeed = 0;
  const int samples = 4000;
  for (int64_t sample = 0; sample < samples; ++sample) {
    AugmentationDraw draw = drawAugmentation(augmentation, 7, 3, sample);
    AugmentationDraw again = drawAugmentation(augmentation, 7, 3, sample);
    ASSERT_EQ(draw.top, again.top);
    ASSERT_EQ(draw.left, again.left);
    ASSERT_EQ(draw.flip, again.flip);
    ASSERT_GE(draw.top, 0);
    ASSERT_LE(draw.top, 8);
    ASSERT_GE(draw.left, 0);
    ASSERT_LE(draw.left, 8);
    tops.insert(draw.top), lefts.insert(draw.left), flips += draw.flip;
    AugmentationDraw epoch = drawAugmentation(augmentation, 7, 4, sample);
    AugmentationDraw seed = drawAugmentation(augmentation, 8, 3, sample);
    changedByEpoch += epoch.top != draw.top || epoch.left != draw.left;
    changedBySeed += seed.top != draw.top || seed.left != draw.left;
  }
  EXPECT_EQ(tops.size(), 9u);
  EXPECT_EQ(lefts.size(), 9u);
  EXPECT_NEAR(flips, samples / 2, samples / 20);
  // Two independent draws of 81 corners agree 1 time in 81.
  EXPECT_GT(changedByEpoch, samples * 9 / 10);
  EXPECT_GT(changedBySeed, samples * 9 / 10);
  // Without flip or crop, nothing is drawn.
  Augmentation cropOnly{4, false, {}};
  Augmentation flipOnly{0, true, {}};
  for (int64_t sample = 0; sample < 100; ++sample) {
    EXPECT_FALSE(drawAugmentation(cropOnly, 1, 0, sample).flip);
    AugmentationDraw draw = drawAugmentation(flipOnly, 1, 0, sample);
    EXPECT_EQ(draw.top, 0);
    EXPECT_EQ(draw.left, 0);
  }
}

/// `count` images of [2, 3, 4] with distinct pixels, labels i % 5.
Dataset distinctImages(int64_t count) {
  Dataset dataset;
  dataset.count = count;
  dataset.channels = 2, dataset.height = 3, dataset.width = 4;
  dataset.images.resize(count * dataset.imageSize());
  std::iota(dataset.images.begin(), dataset.images.end(), 1.0f);
  for (int64_t i = 0; i < count; ++i)
    dataset.labels.push_back(int32_t(i % 5));
  dataset.numClasses = 5;
  return dataset;
}

TEST(ImageTransformsTest, LoaderAugmentsEachSampleByItsOwnDraw) {
  Dataset dataset = distinctImages(11);
  Augmentation augmentation{1, true, {-2.0f, -3.0f}};
  BatchLoader loader(dataset, 4, /*shuffle=*/true, 5, LastBatch::Short, {},
                     augmentation);
  int64_t size = dataset.imageSize();
  std::vector<float> expected(size);
  for (int64_t epoch : {0, 1, 0}) {
    loader.startEpoch(epoch);
    std::vector<int64_t> order = epochOrder(11, 5, epoch);
    int64_t position = 0;
    while (const Batch *batch = loader.next())
      for (int64_t r = 0; r < batch->size; ++r, ++position) {
        int64_t sample = order[position];
        augmentImage(&dataset.images[sample * size], expected.data(), 2, 3, 4,
                     augmentation,
                     drawAugmentation(augmentation, 5, epoch, sample));
        ASSERT_EQ(std::vector<float>(batch->images.begin() + r * size,
                                     batch->images.begin() + (r + 1) * size),
                  expected)
            << "epoch " << epoch << ", sample " << sample;
        ASSERT_EQ(batch->labels[r], sample % 5);
      }
    EXPECT_EQ(position, 11);
  }
}

TEST(ImageTransformsTest, RanksAugmentTheirRowsAsTheWholeBatch) {
  // Two ranks, each assembling its half of every global batch, together
  // hold exactly the augmented batch one process assembles.
  Dataset dataset = distinctImages(13);
  Augmentation augmentation{2, true, {0.5f, 0.5f}};
  BatchLoader whole(dataset, 6, true, 9, LastBatch::Short, {}, augmentation);
  std::vector<std::unique_ptr<BatchLoader>> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.push_back(std::make_unique<BatchLoader>(
        dataset, 6, true, 9, LastBatch::Short,
        [rank](int64_t rows) {
          int64_t first = rank ? rows / 3 : 0;
          return RowRanges{{first, rank ? rows - first : rows / 3}};
        },
        augmentation));
  for (int64_t epoch : {2, 3}) {
    whole.startEpoch(epoch);
    for (auto &rank : ranks)
      rank->startEpoch(epoch);
    int batches = 0;
    while (const Batch *batch = whole.next()) {
      std::vector<float> images;
      for (auto &rank : ranks) {
        const Batch *part = rank->next();
        ASSERT_NE(part, nullptr);
        images.insert(images.end(), part->images.begin(), part->images.end());
      }
      EXPECT_EQ(images, batch->images);
      ++batches;
    }
    EXPECT_EQ(batches, 3);
  }
}

} // namespace
