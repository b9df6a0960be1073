//===- IdxFuzzer.cpp - IDX images and labels to the data set loader -------===//
//
// An input holds an images file and a labels file (FuzzInput.h's
// separator), plain or gzip-compressed, read as Fashion-MNIST's are.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Dataset.h"

#include "fuzz/FuzzInput.h"

using namespace dpc::data;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto [images, labels] = dpc::fuzz::splitFiles(data, size);
  std::string imagesPath = dpc::fuzz::writeScratchFile(
      "images-idx3-ubyte", reinterpret_cast<const uint8_t *>(images.data()),
      images.size());
  std::string labelsPath = dpc::fuzz::writeScratchFile(
      "labels-idx1-ubyte", reinterpret_cast<const uint8_t *>(labels.data()),
      labels.size());
  try {
    Dataset dataset = loadIdx(imagesPath, labelsPath);
    checkLabels(dataset, labelsPath, 10);
    keepFirst(dataset, dataset.count / 2);
  } catch (const DatasetError &error) {
    std::string message = error.what();
    dpc::fuzz::checkErrorLine(
        message, message.find(labelsPath) == 0 ? labelsPath : imagesPath);
  }
  return 0;
}
