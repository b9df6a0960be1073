//===- PlanVersion.h - the plan format's version ----------------*- C++ -*-===//

#ifndef DPC_RUNTIME_PLAN_PLANVERSION_H
#define DPC_RUNTIME_PLAN_PLANVERSION_H

#include <cstdint>

namespace dpc::plan {
/// Written by codegen, checked by the runtime. Bump it on every change to
/// Plan.fbs that an older runtime would misread. 3: Plan.checksum. 4: roles
/// of steps and inputs, and gradient accumulators as their own kind. 5: roles
/// of outputs. 6: DropoutAttrs' span, scale, shift, fill and uniform.
inline constexpr uint32_t kPlanVersion = 6;
} // namespace dpc::plan

#endif // DPC_RUNTIME_PLAN_PLANVERSION_H
