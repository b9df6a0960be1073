//===- NonFinite.h - NaN and infinity in the training state -----*- C++ -*-===//
//
// A finite loss does not prove finite weights (ReLU maps NaN to 0), so after
// every train step the trainer looks at the parameters and the optimizer
// state for NaN or infinity: one pass over them, with no branch per element.
// What it then does is --on-nonfinite: stop the run naming the step and the
// first bad tensor, or skip the step as PyTorch's GradScaler does -- the
// state goes back to what it was before the step (parameters, optimizer
// state, batch-norm statistics and the optimizer's step count), kept as a
// host copy that every good step refreshes.
//
// Only the replicated state is looked at: every replica (every rank) holds
// the same bits of it after the gradient all-reduce, so all of them decide
// alike without communicating. Batch-norm statistics may differ between
// replicas; they are put back with the rest on a skip.
//
// Where the device's optimizer updates check what they write
// (Executor::getCheckedPersistent: the CPU's do), a step that ran one
// update is judged by their flag: the parameters and optimizer state they
// wrote are neither copied nor scanned (with stop), and the tensors are
// read only to name the bad one. The rest of the state, and all of it
// when no update ran since the last check (the first check, a state the
// host wrote), is scanned.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_NONFINITE_H
#define DPC_RUNTIME_TRAIN_NONFINITE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dpc::rt {
class Executor;
}

namespace dpc::train {

enum class OnNonFinite { Stop, SkipStep };

/// The first non-finite element found.
struct NonFiniteValue {
  std::string tensor; // the persistent tensor's name
  std::string kind;   // "parameter" or "optimizer state"
  int64_t index = 0;  // the element, in row-major order
  std::string value;  // "nan", "inf" or "-inf"
  /// "parameter 'fc1.weight' holds nan at index 3".
  std::string describe() const;
};

/// Index of the first element of `count` elements of `dtype` (a plan DType,
/// as an int) that is NaN or infinite, or -1; -1 too for integer types.
int64_t findNonFinite(int32_t dtype, const void *data, int64_t count);
/// Index of the first element of a persistent tensor that its kind may not
/// hold, or -1: NaN anywhere, infinity except where `infinityAllowed` (a
/// buffer may hold a mask of -inf, as a causal attention mask does).
int64_t findInvalidStateValue(int32_t dtype, const void *data, int64_t count,
                              bool infinityAllowed);

/// "nan", "inf" or "-inf": element `index` of `data`, one findNonFinite
/// found.
std::string describeNonFinite(int32_t dtype, const void *data, int64_t index);

class NonFiniteGuard {
public:
  /// Guards the state that `step` (the train step) updates.
  NonFiniteGuard(rt::Executor &executor, int step, OnNonFinite policy);

  /// Takes the state the next step starts from (skip-step only): call it
  /// before the first step and after anything else changes the state.
  void keepState();
  /// After a step: the first non-finite value of the replicated state. On
  /// a good step with skip-step, the state becomes the one to go back to.
  std::optional<NonFiniteValue> check();
  /// skip-step: puts the state kept last back (on every replica).
  void restoreState();

private:
  /// A primary copy of a persistent tensor that is read after each step:
  /// the replicated state (scanned), and with skip-step all the rest.
  struct Entry {
    size_t index;
    bool scanned;
    /// Written and checked by every optimizer update of the step.
    bool checkedByUpdate;
    int32_t dtype;
    int64_t count;
    std::vector<uint8_t> current, saved;
  };
  /// Reads entries[e] (into `current` under skip-step, else into a
  /// temporary) and returns its first non-finite value, if any.
  std::optional<NonFiniteValue> scan(Entry &entry);

  rt::Executor &executor;
  int step;
  OnNonFinite policy;
  std::vector<Entry> entries;
  int64_t savedOptimizerStep = 0;
  /// The optimizer step at the last check (-1: none yet).
  int64_t checkedAtStep = -1;
};

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_NONFINITE_H
