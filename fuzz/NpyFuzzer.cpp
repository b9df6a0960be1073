//===- NpyFuzzer.cpp - .npy images and labels to the data set loader ------===//
//
// An input holds an images file and a labels file (FuzzInput.h's
// separator). Its first byte picks how `dpc run --data npy:` would read
// them: as the file says, as a plan's [1, 28, 28] or [28, 28, 1] sample,
// as NHWC, with normalization, or as token ids.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Dataset.h"
#include "runtime/data/Npy.h"

#include "fuzz/FuzzInput.h"

using namespace dpc::data;

static ImageFormat pickFormat(uint8_t selector) {
  ImageFormat format;
  switch (selector % 6) {
  case 1:
    format.sample = {1, 28, 28};
    break;
  case 2:
    format.sample = {3, 4, 4};
    format.layout = ImageLayout::NHWC;
    break;
  case 3:
    format.normalization.mean = {0.5f, 0.25f, 0.125f};
    format.normalization.std = {0.5f, 2.0f, 4.0f};
    format.sample = {3, 4, 4};
    break;
  case 4:
    format.sample = {16}; // token ids
    break;
  case 5:
    format.layout = ImageLayout::NCHW;
    break;
  }
  return format;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  ImageFormat format = pickFormat(data[0]);
  auto [images, labels] = dpc::fuzz::splitFiles(data + 1, size - 1);
  std::string imagesPath = dpc::fuzz::writeScratchFile(
      "images.npy", reinterpret_cast<const uint8_t *>(images.data()),
      images.size());
  std::string labelsPath = dpc::fuzz::writeScratchFile(
      "labels.npy", reinterpret_cast<const uint8_t *>(labels.data()),
      labels.size());
  try {
    Dataset dataset = loadNpy(imagesPath, labelsPath, format);
    checkLabels(dataset, labelsPath, 10);
  } catch (const DatasetError &error) {
    std::string message = error.what();
    dpc::fuzz::checkErrorLine(
        message, message.find(labelsPath) == 0 ? labelsPath : imagesPath);
  }
  NpyArray array;
  try {
    array = readNpy(imagesPath);
  } catch (const DatasetError &error) {
    dpc::fuzz::checkErrorLine(error.what(), imagesPath);
    return 0;
  }
  // as<T>() names no file (its callers add it): only one line is due.
  try {
    (void)array.as<double>();
  } catch (const DatasetError &error) {
    dpc::fuzz::checkErrorLine(error.what(), "");
  }
  return 0;
}
