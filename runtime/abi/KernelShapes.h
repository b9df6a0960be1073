//===- KernelShapes.h - kernel shapes from tensor dims ----------*- C++ -*-===//
//
// How each kernel's shape arguments follow from the dims of its tensors and
// its attributes, checked: every getter verifies the dtypes and element
// counts of everything the kernel reads or writes, so that a plan that
// passes can never make a kernel touch memory outside its tensors. The
// loader runs the checks at the compiled batch; device backends call the
// getters at the run-time batch.
//
// One header per shape family (shapes/*Shapes.h: the structs the kernels
// take and their getters), the decoded attributes (KernelAttrs.h), and
// here the check of a whole call, which runs the family Kernels.def names.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_KERNELSHAPES_H
#define DPC_RUNTIME_ABI_KERNELSHAPES_H

#include "runtime/abi/KernelArgs.h"
#include "runtime/abi/KernelAttrs.h"
#include "runtime/abi/KernelCall.h"
#include "runtime/abi/KernelCheck.h"
#include "runtime/abi/shapes/ConvShapes.h"
#include "runtime/abi/shapes/ElementwiseShapes.h"
#include "runtime/abi/shapes/EmbeddingShapes.h"
#include "runtime/abi/shapes/JoinShapes.h"
#include "runtime/abi/shapes/LinearShapes.h"
#include "runtime/abi/shapes/LossShapes.h"
#include "runtime/abi/shapes/NormShapes.h"
#include "runtime/abi/shapes/OptimizerShapes.h"
#include "runtime/abi/shapes/PoolShapes.h"
#include "runtime/abi/shapes/RowsShapes.h"

namespace dpc::plan {

/// Checks `call` completely; throws ShapeError.
void checkKernelCall(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_KERNELSHAPES_H
