//===- Dataset.cpp - image classification data sets -----------------------===//

#include "runtime/data/Dataset.h"
#include "runtime/data/Npy.h"

#include <zlib.h>

#include <algorithm>

using namespace dpc::data;

namespace {

[[noreturn]] void fail(const std::string &path, const std::string &message) {
  throw DatasetError(path + ": " + message);
}

/// The whole file, decompressed if it is gzip (zlib reads plain files as is).
std::vector<uint8_t> readMaybeGzipped(const std::string &path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file)
    fail(path, "cannot open the file");
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
  size_t elements = 1;
  for (int d = 0; d < rank; ++d) {
    dims.push_back(bigEndian32(&bytes[4 + 4 * d]));
    elements *= dims.back();
  }
  if (bytes.size() - header != elements)
    fail(path, "holds " + std::to_string(bytes.size() - header) +
                   " bytes of data, but its dims need " +
                   std::to_string(elements));
  return dims;
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
  try {
    dataset.images = images.as<float>();
    std::vector<int64_t> values = labels.as<int64_t>();
    dataset.labels.assign(values.begin(), values.end());
  } catch (const DatasetError &error) {
    fail(imagesPath, error.what());
  }
  for (float &x : dataset.images)
    x = float((x * scale - normalization.mean) / normalization.std);
  for (int32_t label : dataset.labels) {
    if (label < 0)
      fail(labelsPath, "holds a negative label");
    dataset.numClasses = std::max(dataset.numClasses, label + 1);
  }
  return dataset;
}

Dataset dpc::data::loadFashionMnist(const std::string &directory, bool train,
                                    const Normalization &normalization) {
  std::string prefix = directory + (train ? "/train" : "/t10k");
  return loadIdx(prefix + "-images-idx3-ubyte.gz",
                 prefix + "-labels-idx1-ubyte.gz", normalization);
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
