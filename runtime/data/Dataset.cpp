//===- Dataset.cpp - image classification data sets -----------------------===//

#include "runtime/data/Dataset.h"
#include "runtime/abi/CheckedMath.h"
#include "runtime/data/Npy.h"

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

/// Refuses NaN and infinite values (pixels, float targets), which would
/// poison every parameter they reach while the loss may still look finite:
/// "`what` K is NaN; `rule`".
void requireFinite(const std::vector<float> &values, const std::string &path,
                   const char *what = "pixel",
                   const char *rule = "a data set must be finite") {
  auto bad = std::find_if(values.begin(), values.end(),
                          [](float x) { return !std::isfinite(x); });
  if (bad != values.end())
    fail(path, std::string(what) + " " + std::to_string(bad - values.begin()) +
                   " is " + (std::isnan(*bad) ? "NaN" : "infinite") + "; " +
                   rule);
}

/// Class targets as the int32 a plan takes, refusing any that would change
/// on the way (and the largest int32, whose class count would not fit);
/// the ignore index passes as it is.
std::vector<int32_t> toLabels(const std::vector<int64_t> &values,
                              const std::string &path,
                              std::optional<int64_t> ignoreIndex) {
  std::vector<int32_t> labels(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t value = values[i];
    bool ignored = ignoreIndex && value == *ignoreIndex &&
                   value >= std::numeric_limits<int32_t>::min();
    if (!ignored && (value < 0 || value >= std::numeric_limits<int32_t>::max()))
      fail(path, "label " + std::to_string(value) + " at index " +
                     std::to_string(i) + " is not a class index (0 to " +
                     std::to_string(std::numeric_limits<int32_t>::max() - 1) +
                     (ignoreIndex ? ", or the ignore index " +
                                        std::to_string(*ignoreIndex)
                                  : std::string()) +
                     ")");
    labels[i] = static_cast<int32_t>(value);
  }
  return labels;
}

/// "[N, 4, 5]" of a file's shape, or of a form's with N for the samples.
std::string formatShape(const std::vector<int64_t> &dims, bool leadingN) {
  std::string text = "[";
  if (leadingN)
    text += dims.empty() ? "N" : "N, ";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

/// Reads a targets file of `form`: [N, sample...], integers or floats
/// (finite) as the form says, into 4-byte words.
std::vector<int32_t> readTargets(const std::string &path,
                                 const TargetForm &form, int64_t &count) {
  NpyArray array = readNpy(path);
  bool isFloat = !array.dtype.empty() && array.dtype[0] == 'f';
  std::vector<int64_t> sample;
  if (!array.shape.empty())
    sample.assign(array.shape.begin() + 1, array.shape.end());
  if (array.shape.empty() || sample != form.sample || isFloat != form.isFloat)
    fail(path, std::string("holds ") + (isFloat ? "float " : "integer ") +
                   array.dtype + " " + formatShape(array.shape, false) +
                   ", but the plan's targets are " + form.describe());
  count = array.shape[0];
  if (!isFloat)
    return toLabels(convertNpy<int64_t>(array, path), path, form.ignoreIndex);
  std::vector<float> values = convertNpy<float>(array, path);
  requireFinite(values, path, "target", "targets must be finite");
  std::vector<int32_t> words(values.size());
  std::memcpy(words.data(), values.data(), values.size() * sizeof(float));
  return words;
}

/// numClasses: the largest class target + 1 (0 for float targets).
void countClasses(Dataset &dataset) {
  dataset.numClasses = 0;
  if (dataset.targets.isFloat)
    return;
  for (int32_t label : dataset.labels)
    if (label != dataset.targets.ignoreIndex)
      dataset.numClasses = std::max(dataset.numClasses, label + 1);
}

/// "3x32x32".
std::string formatSample(int64_t a, int64_t b, int64_t c) {
  return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c);
}

/// Sets `dataset`'s count and [C, H, W] from an .npy image array's shape;
/// returns whether the file is NHWC. A 4-D array is the format's layout,
/// or else the one of NCHW and NHWC that matches the expected sample.
bool readImageDims(const NpyArray &images, const std::string &path,
                   const ImageFormat &format, Dataset &dataset) {
  const std::vector<int64_t> &shape = images.shape;
  if (format.sample.size() == 1) { // token ids [N, T]
    if (shape.size() != 2 || shape[1] != format.sample[0])
      fail(path, "expected token ids [N, " + std::to_string(format.sample[0]) +
                     "], got " + std::to_string(shape.size()) + " dims");
    dataset.count = shape[0];
    dataset.channels = 1, dataset.height = 1, dataset.width = shape[1];
    return false;
  }
  if (format.sample.size() == 2) { // sequences [N, T, F], as [N, 1, T, F]
    if (shape.size() != 3 || shape[1] != format.sample[0] ||
        shape[2] != format.sample[1])
      fail(path,
           "expected sequences [N, " + std::to_string(format.sample[0]) + ", " +
               std::to_string(format.sample[1]) + "], got " +
               std::to_string(shape.size()) + " dims" +
               (shape.size() == 3 ? " [N, " + std::to_string(shape[1]) + ", " +
                                        std::to_string(shape[2]) + "]"
                                  : ""));
    dataset.count = shape[0];
    dataset.channels = 1, dataset.height = shape[1], dataset.width = shape[2];
    return false;
  }
  if (shape.size() != 3 && shape.size() != 4)
    fail(path, "expected images [N, H, W], [N, C, H, W] or [N, H, W, C], got " +
                   std::to_string(shape.size()) + " dims");
  dataset.count = shape[0];
  if (shape.size() == 3) {
    dataset.channels = 1, dataset.height = shape[1], dataset.width = shape[2];
    return false;
  }
  const std::vector<int64_t> &sample = format.sample;
  ImageLayout layout = format.layout;
  if (layout == ImageLayout::Auto && sample.size() == 3) {
    bool nchw =
        shape[1] == sample[0] && shape[2] == sample[1] && shape[3] == sample[2];
    bool nhwc =
        shape[1] == sample[1] && shape[2] == sample[2] && shape[3] == sample[0];
    if (nchw && nhwc)
      fail(path, "images " + formatSample(shape[1], shape[2], shape[3]) +
                     " may be NCHW or NHWC; say which with --layout "
                     "nchw|nhwc");
    if (!nchw && !nhwc)
      fail(path, "images are " + formatSample(shape[1], shape[2], shape[3]) +
                     " but the plan expects " +
                     formatSample(sample[0], sample[1], sample[2]) +
                     " (NCHW) or " +
                     formatSample(sample[1], sample[2], sample[0]) + " (NHWC)");
    layout = nhwc ? ImageLayout::NHWC : ImageLayout::NCHW;
  }
  bool nhwc = layout == ImageLayout::NHWC;
  dataset.channels = shape[nhwc ? 3 : 1];
  dataset.height = shape[nhwc ? 1 : 2];
  dataset.width = shape[nhwc ? 2 : 3];
  return nhwc;
}

/// Checks `dataset`'s image dims against the format: the plan's sample
/// shape and one normalization mean and std per channel.
void checkFormat(const Dataset &dataset, const std::string &path,
                 const ImageFormat &format) {
  if (format.sample.size() == 3)
    checkImageShape(dataset, path, format.sample[0], format.sample[1],
                    format.sample[2]);
  const Normalization &normalization = format.normalization;
  if (normalization.empty())
    return;
  if (int64_t(normalization.mean.size()) != dataset.channels ||
      normalization.std.size() != normalization.mean.size())
    fail(path, "--normalize has " + std::to_string(normalization.mean.size()) +
                   " means and stds, but the images have " +
                   std::to_string(dataset.channels) +
                   (dataset.channels == 1 ? " channel" : " channels"));
  for (float deviation : normalization.std)
    if (!(deviation > 0))
      fail(path,
           "--normalize: a std must be > 0, got " + std::to_string(deviation));
}

} // namespace

int64_t TargetForm::size() const {
  int64_t count = 1;
  for (int64_t dim : sample)
    count *= dim;
  return count;
}

std::string TargetForm::describe() const {
  return std::string(isFloat ? "float " : "integer ") +
         formatShape(sample, true);
}

Dataset dpc::data::loadIdx(const std::string &imagesPath,
                           const std::string &labelsPath,
                           const ImageFormat &format) {
  std::vector<uint8_t> imageBytes = readMaybeGzipped(imagesPath);
  std::vector<int64_t> imageDims = idxDims(imagesPath, imageBytes, 3, "images");
  std::vector<uint8_t> labelBytes = readMaybeGzipped(labelsPath);
  std::vector<int64_t> labelDims = idxDims(labelsPath, labelBytes, 1, "labels");
  if (format.targets.size() != 1 || format.targets.isFloat)
    fail(labelsPath, "IDX labels are one class per sample, but the plan's "
                     "targets are " +
                         format.targets.describe() + " (give an .npy file)");
  if (imageDims[0] != labelDims[0])
    fail(labelsPath, "has " + std::to_string(labelDims[0]) + " labels for " +
                         std::to_string(imageDims[0]) + " images in " +
                         imagesPath);

  Dataset dataset;
  dataset.count = imageDims[0];
  dataset.channels = 1;
  dataset.height = imageDims[1];
  dataset.width = imageDims[2];
  checkFormat(dataset, imagesPath, format);
  const uint8_t *pixels = imageBytes.data() + 16;
  dataset.images.resize(imageBytes.size() - 16);
  for (size_t i = 0; i < dataset.images.size(); ++i)
    dataset.images[i] = scalePixel(pixels[i]);
  normalizeImages(dataset.images.data(), dataset.count, 1,
                  dataset.height * dataset.width, format.normalization);
  dataset.labels.assign(labelBytes.begin() + 8, labelBytes.end());
  countClasses(dataset);
  return dataset;
}

Dataset dpc::data::loadNpyImages(const std::string &imagesPath,
                                 const ImageFormat &format) {
  NpyArray images = readNpy(imagesPath);
  Dataset dataset;
  bool nhwc = readImageDims(images, imagesPath, format, dataset);
  checkFormat(dataset, imagesPath, format);
  if (format.sample.size() == 1) {
    // Token ids travel as floats, which hold every integer below 2^24;
    // they are checked as the integers they are (a float beyond int64 has
    // no integer to name).
    if (images.dtype[0] == 'f')
      fail(imagesPath, "token ids must be integers, not " + images.dtype);
    if (!format.normalization.empty())
      fail(imagesPath, "token ids take no --normalize");
    std::vector<int64_t> ids = convertNpy<int64_t>(images, imagesPath);
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] < 0 || ids[i] >= (1 << 24))
        fail(imagesPath, "token id " + std::to_string(ids[i]) + " (entry " +
                             std::to_string(i) + ") is outside [0, 2^24)");
    dataset.images.assign(ids.begin(), ids.end());
    dataset.targets = format.targets;
    dataset.labels.assign(dataset.count * format.targets.size(), 0);
    return dataset;
  }
  std::vector<float> pixels = convertNpy<float>(images, imagesPath);
  requireFinite(pixels, imagesPath);
  if (images.dtype == "u1")
    for (float &x : pixels)
      x /= 255.0f; // scalePixel's rule
  if (nhwc) {
    dataset.images.resize(pixels.size());
    transposeNhwcToNchw(pixels.data(), dataset.images.data(), dataset.count,
                        dataset.channels, dataset.height, dataset.width);
  } else {
    dataset.images = std::move(pixels);
  }
  normalizeImages(dataset.images.data(), dataset.count, dataset.channels,
                  dataset.height * dataset.width, format.normalization);
  dataset.targets = format.targets;
  dataset.labels.assign(dataset.count * format.targets.size(), 0);
  return dataset;
}

Dataset dpc::data::loadNpy(const std::string &imagesPath,
                           const std::string &labelsPath,
                           const ImageFormat &format) {
  int64_t count = 0;
  std::vector<int32_t> targets = readTargets(labelsPath, format.targets, count);
  Dataset dataset = loadNpyImages(imagesPath, format);
  if (count != dataset.count)
    fail(labelsPath, "has " + std::to_string(count) + " labels for " +
                         std::to_string(dataset.count) + " images in " +
                         imagesPath);
  dataset.labels = std::move(targets);
  countClasses(dataset);
  return dataset;
}

Dataset dpc::data::loadFashionMnist(const std::string &directory, bool train,
                                    const ImageFormat &format) {
  std::string prefix = directory + (train ? "/train" : "/t10k");
  return loadIdx(prefix + "-images-idx3-ubyte.gz",
                 prefix + "-labels-idx1-ubyte.gz", format);
}

void dpc::data::keepFirst(Dataset &dataset, int64_t count) {
  if (count < 0 || count >= dataset.count)
    return;
  dataset.count = count;
  dataset.images.resize(count * dataset.imageSize());
  dataset.labels.resize(count * dataset.targets.size());
  for (ExtraInput &extra : dataset.extras)
    extra.values.resize(count * extra.size);
  countClasses(dataset);
}

Dataset dpc::data::splitOffLast(Dataset &dataset, int64_t count) {
  count = std::clamp<int64_t>(count, 0, dataset.count);
  int64_t kept = dataset.count - count;
  Dataset tail;
  tail.count = count;
  tail.channels = dataset.channels;
  tail.height = dataset.height;
  tail.width = dataset.width;
  tail.images.assign(dataset.images.begin() + kept * dataset.imageSize(),
                     dataset.images.end());
  tail.targets = dataset.targets;
  tail.labels.assign(dataset.labels.begin() + kept * dataset.targets.size(),
                     dataset.labels.end());
  for (const ExtraInput &extra : dataset.extras)
    tail.extras.push_back({extra.size, std::vector<float>(extra.values.begin() +
                                                              kept * extra.size,
                                                          extra.values.end())});
  countClasses(tail);
  keepFirst(dataset, kept);
  return tail;
}

void dpc::data::checkLabels(const Dataset &dataset, const std::string &path,
                            int64_t numClasses) {
  if (dataset.targets.isFloat)
    return;
  for (size_t i = 0; i < dataset.labels.size(); ++i)
    if (dataset.labels[i] >= numClasses &&
        dataset.labels[i] != dataset.targets.ignoreIndex)
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
