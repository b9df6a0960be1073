//===- DataOptions.h - where the data comes from and its form ---*- C++ -*-===//
//
// The data flags that `dpc run`, `eval` and `predict` share (--data,
// --layout, --normalize), parsed once for all three, and the loading of
// the files they name in the form the plan takes. The images feed the
// plan's one input "images"; a plan with several inputs takes one .npy
// file per input, named by the model's input names
// (npy:tokens=T.npy,image=I.npy,LABELS.npy).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_DATAOPTIONS_H
#define DPC_RUNTIME_TRAIN_DATAOPTIONS_H

#include "runtime/data/Dataset.h"
#include "runtime/train/CommandLine.h"

#include <string>
#include <vector>

namespace dpc::train {

struct DataOptions {
  // --data fashion-mnist[:DIR] | idx|npy:TRAIN_IMAGES,TRAIN_LABELS[,
  // TEST_IMAGES,TEST_LABELS] | npy:IMAGES (predict)
  bool fashionMnist = false;
  std::string dataDirectory;                                    // fashion-mnist
  std::string trainImages, trainLabels, testImages, testLabels; // idx, npy
  // npy:NAME=FILE,...,LABELS[,NAME=FILE,...,LABELS]: a file per input.
  std::vector<std::pair<std::string, std::string>> trainInputs, testInputs;
  bool npy = false;        // the files are .npy arrays rather than IDX
  bool imagesOnly = false; // npy:IMAGES, no labels (predict)
  // --layout nchw|nhwc: of 4-D .npy images (default: by the plan's shape).
  data::ImageLayout layout = data::ImageLayout::Auto;
  // --normalize MEAN,...:STD,...: per channel, after uint8 to [0, 1].
  data::Normalization normalization;
};

/// Declares --data, --layout and --normalize into `options`;
/// `imagesAlone` lets --data name images without labels (npy:X.npy).
void addDataFlags(FlagParser &parser, DataOptions &options,
                  bool imagesAlone = false);

/// Parses a value of --data into `options`' file fields. Throws UsageError.
void parseData(const std::string &value, DataOptions &options);

/// Parses "idx:IMAGES,LABELS" or "npy:IMAGES,LABELS" (--val-data) into
/// the paths and whether they are .npy. Throws UsageError naming `flag`.
void parseLabelledFiles(const std::string &flag, const std::string &value,
                        std::string &images, std::string &labels, bool &npy);

/// Parses --normalize's MEAN,...:STD,... Throws UsageError.
data::Normalization parseNormalization(const std::string &value);

/// --normalize's MEAN,...:STD,... of `normalization`, each number the
/// shortest text that reads back as the same float.
std::string formatNormalization(const data::Normalization &normalization);

/// Parses --augment's comma-separated crop=PAD and flip. Throws UsageError.
data::Augmentation parseAugmentation(const std::string &value);

/// The help lines of --layout and --normalize.
const char *getImageFlagsUsage();

/// The image format `options` ask for, for a plan whose samples are
/// `sample` ([C, H, W]) and whose targets are `targets`.
data::ImageFormat getImageFormat(const DataOptions &options,
                                 const std::vector<int64_t> &sample,
                                 const data::TargetForm &targets = {});

/// A data set and the files it came from (for messages).
struct LoadedData {
  data::Dataset dataset;
  std::string imagesPath, labelsPath;
};

/// A plan's data inputs: each one's binding name and sample dims, in the
/// plan's order (ModelInput.h's getDataInputs).
using PlanInputs = std::vector<std::pair<std::string, std::vector<int64_t>>>;

/// Loads the training split (`test`: the test split) that `options` names
/// for a plan taking `inputs`, in the form `options` asks for: one file
/// (IDX or .npy) for a plan with one input, one .npy file per input
/// otherwise, the first input's as the data set's images and the others'
/// as its extras; the labels file holds `targets`. Without a labels file
/// (predict's npy:IMAGES), labels are 0. Throws data::DatasetError in one line
/// where a file is missing for an input, names none of the plan's, or files
/// disagree in samples.
LoadedData loadInputs(const DataOptions &options, bool test,
                      const PlanInputs &inputs,
                      const data::TargetForm &targets = {});

/// Loads an image and a label file, IDX or .npy.
LoadedData loadLabelledFiles(const std::string &imagesPath,
                             const std::string &labelsPath, bool npy,
                             const data::ImageFormat &format);

/// The directory of --data fashion-mnist[:DIR].
std::string getFashionMnistDirectory(const DataOptions &options);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_DATAOPTIONS_H
