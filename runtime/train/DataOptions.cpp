//===- DataOptions.cpp - where the data comes from and its form -----------===//

#include "runtime/train/DataOptions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dpc::train {
namespace {

/// A finite number, or a UsageError naming `flag`.
float parseFinite(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  double parsed = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(float(parsed)))
    throw UsageError(flag + ": expected a number, got '" + value + "'");
  return float(parsed);
}

/// npy:NAME=FILE,...,LABELS[,NAME=FILE,...,LABELS] (or, `imagesAlone`,
/// npy:NAME=FILE,... without labels): a split is its named files and the
/// labels file that ends it.
void parseNamedFiles(const std::string &value, DataOptions &options,
                     bool imagesAlone) {
  const char *usage = "--data npy: expected NAME=FILE,...,LABELS or "
                      "NAME=FILE,...,LABELS,NAME=FILE,...,LABELS (a file per "
                      "input of the model, by its input name)";
  std::vector<std::vector<std::pair<std::string, std::string>>> splits(1);
  std::vector<std::string> labels;
  for (const std::string &item : splitCommas(value.substr(4))) {
    size_t equals = item.find('=');
    if (item.empty() || equals == 0 || equals + 1 == item.size())
      throw UsageError(usage);
    if (equals == std::string::npos) {
      if (splits.back().empty())
        throw UsageError(usage);
      labels.push_back(item);
      splits.emplace_back();
      continue;
    }
    std::string name = item.substr(0, equals);
    for (const auto &[known, path] : splits.back())
      if (known == name)
        throw UsageError("--data: input '" + name + "' is named twice");
    splits.back().push_back({name, item.substr(equals + 1)});
  }
  bool imagesOnly = imagesAlone && labels.empty() && splits.size() == 1;
  if (!imagesOnly && !splits.back().empty())
    throw UsageError(usage);
  if (!imagesOnly)
    splits.pop_back();
  if (splits.size() > 2)
    throw UsageError(usage);
  options.npy = true;
  options.imagesOnly = imagesOnly;
  options.trainInputs = splits[0];
  options.trainImages = splits[0][0].second;
  if (!imagesOnly)
    options.trainLabels = labels[0];
  if (splits.size() == 2) {
    options.testInputs = splits[1];
    options.testImages = splits[1][0].second;
    options.testLabels = labels[1];
  }
}

/// The names of `inputs`, comma-separated.
std::string listNames(const PlanInputs &inputs) {
  std::string names;
  for (const auto &[name, sample] : inputs)
    names += (names.empty() ? "" : ", ") + name;
  return names;
}

} // namespace

void parseData(const std::string &value, DataOptions &options) {
  if (value == "fashion-mnist" || value.rfind("fashion-mnist:", 0) == 0) {
    options.fashionMnist = true;
    options.dataDirectory =
        value.size() > 14 ? value.substr(14) : std::string();
    return;
  }
  if (value.rfind("npy:", 0) == 0 && value.find('=') != std::string::npos) {
    parseNamedFiles(value, options, /*imagesAlone=*/false);
    return;
  }
  if (value.rfind("idx:", 0) == 0 || value.rfind("npy:", 0) == 0) {
    options.npy = value[0] == 'n';
    std::vector<std::string> paths = splitCommas(value.substr(4));
    bool anyEmpty = false;
    for (const std::string &p : paths)
      anyEmpty = anyEmpty || p.empty();
    if ((paths.size() != 2 && paths.size() != 4) || anyEmpty)
      throw UsageError("--data " + value.substr(0, 4) +
                       " expected TRAIN_IMAGES,TRAIN_LABELS or "
                       "TRAIN_IMAGES,TRAIN_LABELS,TEST_IMAGES,TEST_LABELS");
    options.trainImages = paths[0], options.trainLabels = paths[1];
    if (paths.size() == 4)
      options.testImages = paths[2], options.testLabels = paths[3];
    return;
  }
  throw UsageError("--data: expected fashion-mnist[:DIR], idx:FILES or "
                   "npy:FILES, got '" +
                   value + "'");
}

void addDataFlags(FlagParser &parser, DataOptions &options, bool imagesAlone) {
  parser.addValue("--data", [&options, imagesAlone](const std::string &value) {
    if (imagesAlone && value.rfind("npy:", 0) == 0 &&
        value.find('=') != std::string::npos) {
      parseNamedFiles(value, options, /*imagesAlone=*/true);
      return;
    }
    if (imagesAlone && value.rfind("npy:", 0) == 0 &&
        value.find(',') == std::string::npos &&
        value.find('=') == std::string::npos && value.size() > 4) {
      options.npy = options.imagesOnly = true;
      options.trainImages = value.substr(4);
      return;
    }
    parseData(value, options);
  });
  parser.addValue("--layout", [&options](const std::string &value) {
    if (value != "nchw" && value != "nhwc")
      throw UsageError("--layout: expected nchw or nhwc, got '" + value + "'");
    options.layout =
        value == "nhwc" ? data::ImageLayout::NHWC : data::ImageLayout::NCHW;
  });
  parser.addValue("--normalize", [&options](const std::string &value) {
    options.normalization = parseNormalization(value);
  });
}

void parseLabelledFiles(const std::string &flag, const std::string &value,
                        std::string &images, std::string &labels, bool &npy) {
  std::vector<std::string> paths =
      splitCommas(value.size() > 4 ? value.substr(4) : "");
  if ((value.rfind("idx:", 0) != 0 && value.rfind("npy:", 0) != 0) ||
      paths.size() != 2 || paths[0].empty() || paths[1].empty())
    throw UsageError(flag +
                     ": expected idx:IMAGES,LABELS or "
                     "npy:IMAGES,LABELS, got '" +
                     value + "'");
  images = paths[0], labels = paths[1];
  npy = value[0] == 'n';
}

data::Normalization parseNormalization(const std::string &value) {
  const std::string flag = "--normalize";
  size_t colon = value.find(':');
  if (colon == std::string::npos ||
      value.find(':', colon + 1) != std::string::npos)
    throw UsageError(flag +
                     ": expected MEAN,...:STD,... (one of each per "
                     "channel), got '" +
                     value + "'");
  data::Normalization normalization;
  for (const std::string &mean : splitCommas(value.substr(0, colon)))
    normalization.mean.push_back(parseFinite(flag, mean));
  std::vector<std::string> deviations = splitCommas(value.substr(colon + 1));
  for (const std::string &deviation : deviations)
    normalization.std.push_back(parseFinite(flag, deviation));
  if (normalization.mean.size() != normalization.std.size())
    throw UsageError(flag + ": " + std::to_string(normalization.mean.size()) +
                     " means but " + std::to_string(normalization.std.size()) +
                     " stds; give one of each per channel");
  for (size_t c = 0; c < normalization.std.size(); ++c)
    if (!(normalization.std[c] > 0))
      throw UsageError(flag + ": the std of channel " + std::to_string(c) +
                       " must be > 0, got '" + deviations[c] + "'");
  return normalization;
}

/// --normalize's text of `normalization`.
std::string formatNormalization(const data::Normalization &n) {
  std::string text[2];
  for (size_t c = 0; c < n.mean.size(); ++c)
    for (int part = 0; part < 2; ++part) {
      // The shortest text that reads back as the same float.
      float value = part ? n.std[c] : n.mean[c];
      char number[32];
      for (int digits = 1; digits <= 9; ++digits) {
        std::snprintf(number, sizeof(number), "%.*g", digits, value);
        if (std::strtof(number, nullptr) == value)
          break;
      }
      text[part] += (c ? "," : "") + std::string(number);
    }
  return text[0] + ":" + text[1];
}

data::Augmentation parseAugmentation(const std::string &value) {
  const std::string flag = "--augment";
  data::Augmentation augmentation;
  bool crop = false;
  for (const std::string &item : splitCommas(value)) {
    if (item == "flip" && !augmentation.flip) {
      augmentation.flip = true;
    } else if (item.rfind("crop=", 0) == 0 && !crop) {
      augmentation.cropPadding = parseCount(flag + " crop", item.substr(5), 1);
      crop = true;
    } else {
      throw UsageError(flag +
                       ": expected crop=PAD and flip, each at most "
                       "once, got '" +
                       item + "'");
    }
  }
  return augmentation;
}

const char *getImageFlagsUsage() {
  return "  --layout LAYOUT     4-D .npy images: nchw or nhwc (default: the "
         "one that fits the plan)\n"
         "  --normalize M,..:S,..  per-channel (x - mean) / std, after uint8 "
         "pixels are scaled to [0, 1]\n";
}

data::ImageFormat getImageFormat(const DataOptions &options,
                                 const std::vector<int64_t> &sample,
                                 const data::TargetForm &targets) {
  return {sample, options.layout, options.normalization, targets};
}

LoadedData loadLabelledFiles(const std::string &imagesPath,
                             const std::string &labelsPath, bool npy,
                             const data::ImageFormat &format) {
  return {npy ? data::loadNpy(imagesPath, labelsPath, format)
              : data::loadIdx(imagesPath, labelsPath, format),
          imagesPath, labelsPath};
}

std::string getFashionMnistDirectory(const DataOptions &options) {
  return options.dataDirectory.empty() ? data::kFashionMnistDirectory
                                       : options.dataDirectory;
}

LoadedData loadInputs(const DataOptions &options, bool test,
                      const PlanInputs &inputs,
                      const data::TargetForm &targets) {
  const auto &named = test ? options.testInputs : options.trainInputs;
  const std::string &labels = test ? options.testLabels : options.trainLabels;
  auto formatOf = [&](const std::vector<int64_t> &sample) {
    data::ImageFormat format = getImageFormat(options, sample, targets);
    if (sample.size() == 1)
      format.normalization = {}; // token ids
    return format;
  };
  auto load = [&](const std::string &path, const std::string &labelsPath,
                  const std::vector<int64_t> &sample) {
    if (labelsPath.empty())
      return LoadedData{data::loadNpyImages(path, formatOf(sample)), path, ""};
    return loadLabelledFiles(path, labelsPath, options.npy, formatOf(sample));
  };
  // A plan with one input takes one file, named or not.
  if (inputs.size() == 1 && named.size() <= 1)
    return load(test ? options.testImages : options.trainImages, labels,
                inputs[0].second);
  if (named.empty())
    throw data::DatasetError(
        (test ? options.testImages : options.trainImages) +
        ": the plan takes several inputs (" + listNames(inputs) +
        "): name a file for each, --data npy:" + inputs[0].first +
        "=FILE.npy,...,LABELS.npy");
  for (const auto &[name, path] : named) {
    bool known = false;
    for (const auto &input : inputs)
      known = known || input.first == name;
    if (!known)
      throw data::DatasetError(path + ": the plan has no input '" + name +
                               "' (it takes " + listNames(inputs) + ")");
  }
  LoadedData loaded;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // Members, not a structured binding: clang 14 (the fuzz build) cannot
    // capture one in a lambda.
    const auto &name = inputs[i].first;
    const auto &sample = inputs[i].second;
    auto file = std::find_if(named.begin(), named.end(),
                             [&](const auto &f) { return f.first == name; });
    if (file == named.end())
      throw data::DatasetError("--data names no file for the plan's input '" +
                               name + "' (it takes " + listNames(inputs) + ")");
    if (i == 0) {
      loaded = load(file->second, labels, sample);
      continue;
    }
    data::Dataset extra = data::loadNpyImages(file->second, formatOf(sample));
    if (extra.count != loaded.dataset.count)
      throw data::DatasetError(
          file->second + ": has " + std::to_string(extra.count) +
          " samples for input '" + name + "', but " + loaded.imagesPath +
          " has " + std::to_string(loaded.dataset.count) + " for '" +
          inputs[0].first + "'");
    loaded.dataset.extras.push_back(
        {extra.imageSize(), std::move(extra.images)});
  }
  return loaded;
}

} // namespace dpc::train
