//===- Balance.h - a per-device cost model and its split -------*- C++ -*-===//
//
// `dpc compile --balance[=COSTS.json]` splits the global batch over the
// devices in proportion to their training throughput, so that a slow and a
// fast device finish their replica of the step together. The throughputs
// come from a cost file (written by `dpc calibrate` or by hand):
//
//   {
//     "unit": "images/s",
//     "throughput": { "cpu:0": 812.5, "cpu": 800, "cuda": 12000 }
//   }
//
// A device takes the entry of its exact name, else the entry of its kind
// (`cpu`, `cuda`). Throughputs are positive numbers; only their ratios
// matter. Other top-level members (unit, model, batch, steps, ...) are
// informational.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_BALANCE_H
#define DPC_TOOLS_DPC_BALANCE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dpc {

struct CostModel {
  /// Device names or kinds with their throughput, in file order.
  std::vector<std::pair<std::string, double>> throughput;
  /// The unit of the throughputs ("images/s"), or empty.
  std::string unit;
  /// Informational: what the throughputs were measured on (0 / empty if
  /// unknown).
  std::string model;
  int64_t batch = 0, steps = 0;
};

/// Parses the text of a cost file. Errors are one line (without the file
/// name).
llvm::Expected<CostModel> parseCostModel(llvm::StringRef text);
/// Reads and parses a cost file; errors name `path`.
llvm::Expected<CostModel> readCostModel(llvm::StringRef path);
/// The cost file for `model` (pretty-printed JSON, ending in a newline).
std::string printCostModel(const CostModel &model);

/// The throughput of `device` (cpu:K or cuda:K): its own entry, else its
/// kind's. Errors if there is neither.
llvm::Expected<double> lookupThroughput(const CostModel &model,
                                        llvm::StringRef device);

/// Splits `batch` rows in proportion to `throughputs` (all positive):
/// each device gets the floor of its exact share, and the rows left over go
/// one each to the largest remainders, ties to the lower device. The sizes
/// sum to `batch`; a device may get 0.
llvm::SmallVector<int64_t> balanceSplit(llvm::ArrayRef<double> throughputs,
                                        int64_t batch);

} // namespace dpc

#endif // DPC_TOOLS_DPC_BALANCE_H
