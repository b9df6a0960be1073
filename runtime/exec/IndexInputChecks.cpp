//===- IndexInputChecks.cpp - bounds of label and index inputs ------------===//

#include "runtime/exec/IndexInputChecks.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace dpc::rt {

void findIndexInputs(const plan::Step &step,
                     const plan::Instruction &instruction,
                     IndexBounds &bounds) {
  const plan::KernelSignature *signature =
      plan::getKernelSignature(instruction.kernel());
  const auto *operands = instruction.operands();
  if (!signature || !operands || !step.inputs())
    return;
  struct Role {
    const char *indices, *bounding, *what;
    bool rowsBound; // the bounding operand's dim 0, else its other dims
  };
  for (Role role : {Role{"Labels", "Logits", "label", false},
                    Role{"Indices", "Table", "index", true}}) {
    int indices = signature->findOperand(role.indices);
    int bounding = signature->findOperand(role.bounding);
    if (indices < 0 || bounding < 0 ||
        operands->size() <= static_cast<size_t>(std::max(indices, bounding)))
      continue;
    std::vector<int64_t> dims =
        plan::toDims(step.tensors()->Get(operands->Get(bounding))->dims());
    int64_t limit = role.rowsBound ? dims[0] : 1;
    for (size_t d = 1; !role.rowsBound && d < dims.size(); ++d)
      limit *= dims[d];
    for (const plan::Binding *binding : *step.inputs())
      if (binding->tensor() == operands->Get(indices)) {
        auto [it, inserted] = bounds.emplace(binding->name()->str(),
                                             IndexBound{limit, role.what});
        if (!inserted)
          it->second.limit = std::min(it->second.limit, limit);
      }
  }
}

void checkIndices(std::string_view step, std::string_view name,
                  const void *data, size_t bytes, IndexBound bound) {
  const auto *source = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < bytes / sizeof(int32_t); ++i) {
    int32_t value;
    std::memcpy(&value, source + i * sizeof(int32_t), sizeof value);
    if (value >= 0 && value < bound.limit)
      continue;
    bool label = std::string_view(bound.what) == "label";
    throw std::invalid_argument(
        "step '" + std::string(step) + "': input '" + std::string(name) +
        (label ? "' row " : "' entry ") + std::to_string(i) + " holds " +
        bound.what + " " + std::to_string(value) + ", outside the " +
        std::to_string(bound.limit) +
        (label ? " classes" : " rows of its table"));
  }
}

} // namespace dpc::rt
