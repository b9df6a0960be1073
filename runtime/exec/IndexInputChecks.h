//===- IndexInputChecks.h - bounds of label and index inputs ----*- C++ -*-===//
//
// Labels index rows of the logits and embedding indices rows of a table:
// one outside would make a kernel read out of bounds (CPU) or produce NaN
// (CUDA), so every backend gets them checked here, on the host, when they
// are bound.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_INDEXINPUTCHECKS_H
#define DPC_RUNTIME_EXEC_INDEXINPUTCHECKS_H

#include "runtime/plan/Plan_generated.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace dpc::rt {

/// What an index input may hold: [0, limit), and what its entries are.
struct IndexBound {
  int64_t limit;
  const char *what; // "label" or "index"
};
using IndexBounds = std::map<std::string, IndexBound, std::less<>>;

/// Records the inputs of `step` that `instruction` reads as indices, if
/// any: labels, bounded by the class count of the logits (the columns of
/// the Logits operand), and embedding indices, by the rows of the Table
/// operand.
void findIndexInputs(const plan::Step &step,
                     const plan::Instruction &instruction, IndexBounds &bounds);

/// Throws std::invalid_argument naming `step`, input `name` and the first
/// i32 entry of `data` outside `bound`.
void checkIndices(std::string_view step, std::string_view name,
                  const void *data, size_t bytes, IndexBound bound);

} // namespace dpc::rt

#endif // DPC_RUNTIME_EXEC_INDEXINPUTCHECKS_H
