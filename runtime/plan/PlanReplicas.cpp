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
// programs are not compared kernel for kernel. What no such choice
// changes is which parts of the training state the model reads: every
// replica's forward and backward kernels (all but the optimizer updates
// and the collectives) must read the same persistent tensors, so a
// layer's weight or bias left out on one device is caught.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/plan/PlanLoader.h"

#include <map>
#include <set>
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
    // Not capturing the structured binding: clang 14 refuses it.
    auto roleMismatch = [&, bindingName = name](const char *have,
                                                const char *want) {
      plan.fail(where + ": " + kind + " '" + bindingName + "' has role " +
                have + " on " + deviceOf(replica) + ", " + want + " on " +
                deviceOf(reference));
    };
    if (binding->role() != other->second->role())
      roleMismatch(EnumNameInputRole(binding->role()),
                   EnumNameInputRole(other->second->role()));
    if (binding->output_role() != other->second->output_role())
      roleMismatch(EnumNameOutputRole(binding->output_role()),
                   EnumNameOutputRole(other->second->output_role()));
    std::string have = describeIndex(replica, binding->tensor());
    std::string want = describeIndex(reference, other->second->tensor());
    if (have != want)
      plan.fail(where + ": " + kind + " '" + name + "' is " + have + " on " +
                deviceOf(replica) + ", " + want + " on " + deviceOf(reference));
  }
}

/// The persistent tensors (by name) that `step`'s model kernels read,
/// through any chain of aliases (the loader has checked them acyclic).
/// The optimizer updates and the collectives are left out: they read
/// every parameter whatever the model computes.
std::set<std::string> getStateReadByModel(const LoadedPlan &plan,
                                          const Step &step) {
  std::set<std::string> names;
  const auto *tensors = step.tensors();
  if (!step.streams() || !tensors)
    return names;
  for (const Stream *stream : *step.streams()) {
    if (!stream->instructions())
      continue;
    for (const Instruction *call : *stream->instructions()) {
      const KernelSignature *signature = getKernelSignature(call->kernel());
      if (!call->operands() || !signature || signature->has(kOptimizer) ||
          signature->has(kCollective))
        continue;
      for (int t : *call->operands()) {
        for (size_t hops = 0; t >= 0 && hops <= tensors->size() &&
                              tensors->Get(t)->storage() == Storage::Alias;
             ++hops)
          t = tensors->Get(t)->alias();
        if (t < 0 || tensors->Get(t)->storage() != Storage::Persistent)
          continue;
        names.insert(plan->persistent()
                         ->Get(tensors->Get(t)->persistent())
                         ->name()
                         ->str());
      }
    }
  }
  return names;
}

/// `replica`'s model kernels read the persistent tensors `reference`'s do.
void checkStateRead(const LoadedPlan &plan, const std::string &where,
                    const Step &reference, const Step &replica) {
  std::set<std::string> expected = getStateReadByModel(plan, reference);
  std::set<std::string> actual = getStateReadByModel(plan, replica);
  for (const std::string &name : expected)
    if (!actual.count(name))
      plan.fail(where + ": the replica on " + deviceOf(replica) +
                " never reads '" + name + "', the one on " +
                deviceOf(reference) + " does");
  for (const std::string &name : actual)
    if (!expected.count(name))
      plan.fail(where + ": the replica on " + deviceOf(replica) + " reads '" +
                name + "', the one on " + deviceOf(reference) + " never does");
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
      checkStateRead(plan, where, reference, replica);
    }
  }
}

} // namespace dpc::plan
