//===- PlanRoles.cpp - the roles of a plan's steps and inputs -------------===//
//
// The runtime finds steps, inputs and gradient accumulators by role
// (Plan.fbs: StepRole, InputRole, OutputRole,
// PersistentKind::GradAccumulator), so the loader checks that each role
// names what it must: one step (with its replicas) per role, one input and
// one output per role in a step, and accumulation roles only in a plan that
// accumulates.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanLoader.h"

#include <map>
#include <string>

namespace dpc::plan {

namespace {

std::string roleName(StepRole role) { return EnumNameStepRole(role); }

/// `bindings` (a step's inputs or outputs, `kind`) hold known roles
/// (`roleOf`, named by `nameOf`), at most one binding per role but `none`.
template <typename Role, typename RoleOf, typename NameOf>
void checkBindingRoles(
    const LoadedPlan &plan, const Step &step,
    const flatbuffers::Vector<flatbuffers::Offset<Binding>> *bindings,
    const std::string &kind, Role none, RoleOf roleOf, NameOf nameOf) {
  if (!bindings)
    return;
  std::string where = "step '" + step.name()->str() + "'";
  std::map<Role, std::string> byRole;
  for (const Binding *binding : *bindings) {
    Role role = roleOf(*binding);
    std::string name = binding->name()->str();
    if (role < Role::MIN || role > Role::MAX)
      plan.fail(where + ": " + kind + " '" + name + "' has unknown role " +
                std::to_string(static_cast<int>(role)));
    if (role == none)
      continue;
    auto [it, inserted] = byRole.emplace(role, name);
    if (!inserted)
      plan.fail(where + ": " + kind + "s '" + it->second + "' and '" + name +
                "' both have role " + nameOf(role));
  }
}

void checkInputRoles(const LoadedPlan &plan, const Step &step) {
  checkBindingRoles(
      plan, step, step.inputs(), "input", InputRole::Data,
      [](const Binding &b) { return b.role(); },
      [](InputRole role) { return EnumNameInputRole(role); });
}

void checkOutputRoles(const LoadedPlan &plan, const Step &step) {
  checkBindingRoles(
      plan, step, step.outputs(), "output", OutputRole::Other,
      [](const Binding &b) { return b.output_role(); },
      [](OutputRole role) { return EnumNameOutputRole(role); });
}

} // namespace

void checkRoles(const LoadedPlan &plan) {
  bool accumulates = plan->grad_accum() > 1;
  std::map<std::string, const Step *> byName;
  std::map<StepRole, std::string> byRole;
  for (const Step *step : *plan->steps()) {
    StepRole role = step->role();
    std::string name = step->name()->str();
    std::string where = "step '" + name + "'";
    if (role < StepRole::MIN || role > StepRole::MAX)
      plan.fail(where + ": unknown role " +
                std::to_string(static_cast<int>(role)));
    auto [replica, first] = byName.emplace(name, step);
    if (!first && replica->second->role() != role)
      plan.fail(where + ": the replica on device " +
                std::to_string(step->device()) + " has role " + roleName(role) +
                ", the one on device " +
                std::to_string(replica->second->device()) + " has role " +
                roleName(replica->second->role()));
    if (role != StepRole::Other) {
      auto [it, inserted] = byRole.emplace(role, name);
      if (!inserted && it->second != name)
        plan.fail("steps '" + it->second + "' and '" + name +
                  "' both have role " + roleName(role));
    }
    if (!accumulates &&
        (role == StepRole::AccumFirst || role == StepRole::AccumStep))
      plan.fail(where + " has role " + roleName(role) + ", but grad_accum is " +
                std::to_string(plan->grad_accum()));
    checkInputRoles(plan, *step);
    checkOutputRoles(plan, *step);
  }
  if (const auto *persistent = plan->persistent())
    for (const PersistentTensor *tensor : *persistent)
      if (!accumulates && tensor->kind() == PersistentKind::GradAccumulator)
        plan.fail("persistent tensor '" + tensor->name()->str() +
                  "' is a gradient accumulator, but grad_accum is " +
                  std::to_string(plan->grad_accum()));
}

} // namespace dpc::plan
