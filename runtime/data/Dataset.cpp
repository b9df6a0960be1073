//===- Dataset.cpp - image classification data sets -----------------------===//

#include "runtime/data/Dataset.h"
#include "runtime/data/Npy.h"
#include "runtime/plan/CheckedMath.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

using namespace dpc::data;

namespace {

[[noreturn]] void fail(const std::string &path, const std::string &message) {
  throw DatasetError(path + ": " + message);
}

/// The whole file, decompressed if it is gzip (zlib reads plain files as is).
std::vector<uint8_t> readMaybeGzipped(const std::string &path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file)
    fail(path,
         std::string("cannot open the file (") + std::strerror(errno) + ")");
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  int read;
  while ((read = gzread(file, chunk, sizeof(chunk))) > 0)
    bytes.insert(bytes.end(), chunk, chunk + read);
  int errnum = 0;
  const char *message = gzerror(file, &errnum);
  bool truncated = read < 0 || (errnum != Z_OK && errnum != Z_STREAM_END);
  std::string reason = truncated ? message : "";
  gzclose(file);
  if (truncated)
    fail(path, "cannot read the file (" + reason + ")");
  return bytes;
}

uint32_t bigEndian32(const uint8_t *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 |
         uint32_t(p[3]);
}

/// The dims of an IDX file of unsigned bytes with `rank` dims; checks that
/// the data that follows is exactly as long as they say.
std::vector<int64_t> idxDims(const std::string &path,
                             const std::vector<uint8_t> &bytes, int rank,
                             const char *what) {
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0)
    fail(path, "not an IDX file");
  if (bytes[2] != 0x08)
    fail(path, "IDX element type 0x" + std::to_string(bytes[2]) +
                   " is not unsigned bytes");
  if (bytes[3] != rank)
    fail(path, std::string("expected ") + what + " (an IDX file with " +
                   std::to_string(rank) + " dims), found " +
                   std::to_string(bytes[3]) + " dims");
  size_t header = 4 + 4 * size_t(rank);
  if (bytes.size() < header)
    fail(path, "truncated IDX header");
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d)
    dims.push_back(bigEndian32(&bytes[4 + 4 * d]));
  // Three 32-bit dims can overflow 64 bits: a product that does is no
  // match for any file.
  std::optional<int64_t> elements = dpc::checkedProduct(dims);
  if (!elements || bytes.size() - header != static_cast<uint64_t>(*elements))
    fail(path, "holds " + std::to_string(bytes.size() - header) +
                   " bytes of data, but its dims need " +
                   (elements ? std::to_string(*elements) : "more than 2^63"));
  return dims;
}

/// The elements of `array` as T; a type as<T> does not read fails naming
/// `path`.
template <typename T>
std::vector<T> convertNpy(const NpyArray &array, const std::string &path) {
  try {
    return array.as<T>();
  } catch (const DatasetError &error) {
    fail(path, error.what());
  }
}

/// Refuses NaN and infinite pixels, which would poison every parameter
/// they reach while the loss may still look finite.
void requireFinite(const std::vector<float> &pixels, const std::string &path) {
  auto bad = std::find_if(pixels.begin(), pixels.end(),
                          [](float x) { return !std::isfinite(x); });
  if (bad != pixels.end())
    fail(path, "pixel " + std::to_string(bad - pixels.begin()) + " is " +
                   (std::isnan(*bad) ? "NaN" : "infinite") +
                   "; a data set must be finite");
}

/// Labels as the int32 a plan takes, refusing any that would change on
/// the way (and the largest int32, whose class count would not fit).
std::vector<int32_t> toLabels(const std::vector<int64_t> &values,
                              const std::string &path) {
  std::vector<int32_t> labels(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t value = values[i];
    if (value < 0 || value >= std::numeric_limits<int32_t>::max())
      fail(path, "label " + std::to_string(value) + " at index " +
                     std::to_string(i) + " is not a class index (0 to " +
                     std::to_string(std::numeric_limits<int32_t>::max() - 1) +
                     ")");
    labels[i] = static_cast<int32_t>(value);
  }
  return labels;
}

} // namespace

Dataset dpc::data::loadIdx(const std::string &imagesPath,
                           const std::string &labelsPath,
                           const Normalization &normalization) {
  std::vector<uint8_t> imageBytes = readMaybeGzipped(imagesPath);
  std::vector<int64_t> imageDims = idxDims(imagesPath, imageBytes, 3, "images");
  std::vector<uint8_t> labelBytes = readMaybeGzipped(labelsPath);
  std::vector<int64_t> labelDims = idxDims(labelsPath, labelBytes, 1, "labels");
  if (imageDims[0] != labelDims[0])
    fail(labelsPath, "has " + std::to_string(labelDims[0]) + " labels for " +
                         std::to_string(imageDims[0]) + " images in " +
                         imagesPath);
  if (!(normalization.std > 0))
    throw DatasetError("normalization std must be > 0");

  Dataset dataset;
  dataset.count = imageDims[0];
  dataset.channels = 1;
  dataset.height = imageDims[1];
  dataset.width = imageDims[2];
  const uint8_t *pixels = imageBytes.data() + 16;
  dataset.images.resize(imageBytes.size() - 16);
  float scale = 1.0f / (255.0f * normalization.std);
  float shift = normalization.mean / normalization.std;
  for (size_t i = 0; i < dataset.images.size(); ++i)
    dataset.images[i] = pixels[i] * scale - shift;
  dataset.labels.assign(labelBytes.begin() + 8, labelBytes.end());
  dataset.numClasses =
      dataset.labels.empty()
          ? 0
          : *std::max_element(dataset.labels.begin(), dataset.labels.end()) + 1;
  return dataset;
}

Dataset dpc::data::loadNpy(const std::string &imagesPath,
                           const std::string &labelsPath,
                           const Normalization &normalization) {
  NpyArray images = readNpy(imagesPath);
  NpyArray labels = readNpy(labelsPath);
  if (images.shape.size() != 3 && images.shape.size() != 4)
    fail(imagesPath, "expected images [N, H, W] or [N, C, H, W], got " +
                         std::to_string(images.shape.size()) + " dims");
  if (labels.shape.size() != 1 || labels.dtype[0] == 'f')
    fail(labelsPath, "expected a 1-D array of integer labels");
  if (labels.shape[0] != images.shape[0])
    fail(labelsPath, "has " + std::to_string(labels.shape[0]) + " labels for " +
                         std::to_string(images.shape[0]) + " images in " +
                         imagesPath);
  if (!(normalization.std > 0))
    throw DatasetError("normalization std must be > 0");
  Dataset dataset;
  dataset.count = images.shape[0];
  bool hasChannels = images.shape.size() == 4;
  dataset.channels = hasChannels ? images.shape[1] : 1;
  dataset.height = images.shape[hasChannels ? 2 : 1];
  dataset.width = images.shape[hasChannels ? 3 : 2];
  double scale = images.dtype == "u1" ? 1.0 / 255 : 1.0;
  dataset.images = convertNpy<float>(images, imagesPath);
  requireFinite(dataset.images, imagesPath);
  for (float &x : dataset.images)
    x = float((x * scale - normalization.mean) / normalization.std);
  dataset.labels =
      toLabels(convertNpy<int64_t>(labels, labelsPath), labelsPath);
  for (int32_t label : dataset.labels)
    dataset.numClasses = std::max(dataset.numClasses, label + 1);
  return dataset;
}

Dataset dpc::data::loadFashionMnist(const std::string &directory, bool train,
                                    const Normalization &normalization) {
  std::string prefix = directory + (train ? "/train" : "/t10k");
  return loadIdx(prefix + "-images-idx3-ubyte.gz",
                 prefix + "-labels-idx1-ubyte.gz", normalization);
}

void dpc::data::checkLabels(const Dataset &dataset, const std::string &path,
                            int64_t numClasses) {
  for (size_t i = 0; i < dataset.labels.size(); ++i)
    if (dataset.labels[i] >= numClasses)
      fail(path, "label " + std::to_string(dataset.labels[i]) + " at index " +
                     std::to_string(i) + " is out of range for the plan's " +
                     std::to_string(numClasses) + " classes");
}

void dpc::data::checkImageShape(const Dataset &dataset, const std::string &name,
                                int64_t channels, int64_t height,
                                int64_t width) {
  if (dataset.channels == channels && dataset.height == height &&
      dataset.width == width)
    return;
  auto shape = [](int64_t c, int64_t h, int64_t w) {
    return std::to_string(c) + "x" + std::to_string(h) + "x" +
           std::to_string(w);
  };
  throw DatasetError(name + ": images are " +
                     shape(dataset.channels, dataset.height, dataset.width) +
                     " but the plan expects " + shape(channels, height, width));
}
