//===- DatasetError.h - one-line errors of the data loaders -----*- C++ -*-===//
//
// The error every data reader throws (Dataset.h's IDX sets, Npy.h's
// arrays, the trainer's --data options): its own header, so that the
// readers need not include each other for it.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_DATA_DATASETERROR_H
#define DPC_RUNTIME_DATA_DATASETERROR_H

#include "runtime/io/OneLine.h"

#include <stdexcept>
#include <string>

namespace dpc::data {

/// One line, whatever the file's names hold (OneLine.h).
struct DatasetError : std::runtime_error {
  explicit DatasetError(const std::string &message)
      : std::runtime_error(io::oneLine(message)) {}
};

} // namespace dpc::data

#endif // DPC_RUNTIME_DATA_DATASETERROR_H
