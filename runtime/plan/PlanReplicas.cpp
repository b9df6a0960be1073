//===- PlanReplicas.cpp - the replicas of a step are one step -------------===//
//
// The replicas of a data-parallel step (steps of the same name, one per
// device) run the same program on their shares of the batch: the executor
// binds the same inputs to each and joins their outputs, and the
// collectives pair their gradients. The loader checks that they have the
// same signature: the same inputs and outputs, by name, role, dtype and
// dims other than the batch. Their kernels may differ: each device's share
// of the batch chooses its own layouts, algorithms, fusions and
// recomputation (a share of 0 rows, a smaller share's Winograd), so the
// programs are not compared kernel for kernel.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/PlanTypes.h"
#include "runtime/plan/PlanLoader.h"

#include <map>
#include <string>

namespace dpc::plan {

namespace {

/// "F32 [batch, 10]": the dtype and dims, the batch axis (whose size is the
/// device's share) shown as "batch" or "SCALE*batch".
std::string describeTensor(const Tensor &tensor) {
  std::vector<int64_t> dims = toDims(tensor.dims());
  std::string text = std::string(EnumNameDType(tensor.dtype())) + " [";
  for (size_t i = 0; i < dims.size(); ++i) {
    text += i ? ", " : "";
    if (tensor.batch_dim() && int64_t(i) == tensor.batch_axis())
      text += (tensor.batch_scale() == 1
                   ? std::string()
                   : std::to_string(tensor.batch_scale()) + "*") +
              "batch";
    else
      text += std::to_string(dims[i]);
  }
  return text + "]";
}

/// Tensor `t` of `step` as describeTensor shows it; "absent" for -1 (an
/// optional operand left out).
std::string describeIndex(const Step &step, int t) {
  return t < 0 ? "absent" : describeTensor(*step.tensors()->Get(t));
}

std::string deviceOf(const Step &step) {
  return "device " + std::to_string(step.device());
}

using Bindings = flatbuffers::Vector<flatbuffers::Offset<Binding>>;

/// `replica`'s bindings of `kind` ("input", "output") are `reference`'s:
/// the same names, each with the same role and tensor signature.
void checkBindings(const LoadedPlan &plan, const std::string &where,
                   const char *kind, const Step &reference,
                   const Bindings *referenceBindings, const Step &replica,
                   const Bindings *replicaBindings) {
  std::map<std::string, const Binding *> expected, actual;
  if (referenceBindings)
    for (const Binding *binding : *referenceBindings)
      expected.emplace(binding->name()->str(), binding);
  if (replicaBindings)
    for (const Binding *binding : *replicaBindings)
      actual.emplace(binding->name()->str(), binding);
  for (const auto &[name, binding] : expected)
    if (!actual.count(name))
      plan.fail(where + ": the replica on " + deviceOf(replica) + " has no " +
                kind + " '" + name + "', the one on " + deviceOf(reference) +
                " has");
  for (const auto &[name, binding] : actual) {
    auto other = expected.find(name);
    if (other == expected.end())
      plan.fail(where + ": the replica on " + deviceOf(replica) + " has " +
                kind + " '" + name + "', the one on " + deviceOf(reference) +
                " has not");
    if (binding->role() != other->second->role())
      plan.fail(where + ": " + kind + " '" + name + "' has role " +
                EnumNameInputRole(binding->role()) + " on " +
                deviceOf(replica) + ", " +
                EnumNameInputRole(other->second->role()) + " on " +
                deviceOf(reference));
    std::string have = describeIndex(replica, binding->tensor());
    std::string want = describeIndex(reference, other->second->tensor());
    if (have != want)
      plan.fail(where + ": " + kind + " '" + name + "' is " + have + " on " +
                deviceOf(replica) + ", " + want + " on " + deviceOf(reference));
  }
}

} // namespace

void checkReplicaSignatures(const LoadedPlan &plan) {
  // Each step's replicas, in plan order; the first is the reference.
  std::map<std::string, std::vector<const Step *>> replicas;
  for (const Step *step : *plan->steps())
    replicas[step->name()->str()].push_back(step);
  for (const auto &[name, steps] : replicas) {
    std::string where = "step '" + name + "'";
    const Step &reference = *steps[0];
    for (size_t r = 1; r < steps.size(); ++r) {
      const Step &replica = *steps[r];
      checkBindings(plan, where, "input", reference, reference.inputs(),
                    replica, replica.inputs());
      checkBindings(plan, where, "output", reference, reference.outputs(),
                    replica, replica.outputs());
    }
  }
}

} // namespace dpc::plan
