//===- Kernels.h - The CPU kernel library, all of it ------------*- C++ -*-===//
//
// Forward and backward kernels for every op of the `nn` dialect, f32, plain
// row-major (NCHW) layout, plus optimizer updates and buffer utilities. All
// take raw pointers the caller owns and overwrite their outputs unless they
// say otherwise. The batch size is a run-time argument of every call.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_KERNELS_H
#define DPC_RUNTIME_KERNELS_KERNELS_H

#include "runtime/kernels/BatchMatmul.h"
#include "runtime/kernels/BatchNorm.h"
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/CrossEntropy.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Embedding.h"
#include "runtime/kernels/KernelContext.h"
#include "runtime/kernels/LayerNorm.h"
#include "runtime/kernels/Linear.h"
#include "runtime/kernels/Optimizer.h"
#include "runtime/kernels/Pool.h"
#include "runtime/kernels/Reorder.h"
#include "runtime/kernels/Softmax.h"
#include "runtime/kernels/Utility.h"

#endif // DPC_RUNTIME_KERNELS_KERNELS_H
