//===- TestData.h - small IDX data sets for the trainer's tests -*- C++ -*-===//

#ifndef DPC_RUNTIME_TRAIN_TEST_TESTDATA_H
#define DPC_RUNTIME_TRAIN_TEST_TESTDATA_H

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace dpc::train::test {

struct IdxFiles {
  std::string images, labels;
};

inline void putBigEndian(std::ofstream &file, uint32_t value) {
  char bytes[4] = {char(value >> 24), char(value >> 16), char(value >> 8),
                   char(value)};
  file.write(bytes, 4);
}

/// Writes `count` uncompressed IDX images of height x width whose class
/// (0..classes-1) is a bright horizontal band: learnable in a few steps.
inline IdxFiles writeBandDataset(const std::string &prefix, int64_t count,
                                 int64_t height, int64_t width, int32_t classes,
                                 uint32_t seed, int32_t labelOffset = 0) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> noise(0, 60);
  IdxFiles files{prefix + "-images-idx3-ubyte", prefix + "-labels-idx1-ubyte"};
  std::ofstream images(files.images, std::ios::binary);
  std::ofstream labels(files.labels, std::ios::binary);
  putBigEndian(images, 0x803);
  putBigEndian(images, uint32_t(count));
  putBigEndian(images, uint32_t(height));
  putBigEndian(images, uint32_t(width));
  putBigEndian(labels, 0x801);
  putBigEndian(labels, uint32_t(count));
  for (int64_t i = 0; i < count; ++i) {
    int32_t label = int32_t(random() % uint32_t(classes));
    int64_t bandBegin = label * height / classes,
            bandEnd = (label + 1) * height / classes;
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x) {
        int value = noise(random) + (y >= bandBegin && y < bandEnd ? 180 : 0);
        images.put(char(uint8_t(value)));
      }
    labels.put(char(uint8_t(label + labelOffset)));
  }
  return files;
}

} // namespace dpc::train::test

#endif // DPC_RUNTIME_TRAIN_TEST_TESTDATA_H
