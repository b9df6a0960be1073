//===- Elementwise.h - Activations, binary ops, padding ---------*- C++ -*-===//

#ifndef DPC_RUNTIME_KERNELS_ELEMENTWISE_H
#define DPC_RUNTIME_KERNELS_ELEMENTWISE_H

#include "runtime/abi/shapes/ElementwiseShapes.h"
#include "runtime/abi/shapes/PoolShapes.h"
#include "runtime/kernels/KernelMath.h"

#include <cstdint>

namespace dpc::kernels {

//===----------------------------------------------------------------------===//
// Activations. Backward takes the forward OUTPUT y (for relu, x gives the
// same result). In-place use (y == x, dx == dy) is allowed.
//===----------------------------------------------------------------------===//

void reluForward(int64_t size, const float *x, float *y);
void reluBackward(int64_t size, const float *y, const float *dy, float *dx);
void sigmoidForward(int64_t size, const float *x, float *y);
void sigmoidBackward(int64_t size, const float *y, const float *dy, float *dx);
void tanhForward(int64_t size, const float *x, float *y);
void tanhBackward(int64_t size, const float *y, const float *dy, float *dx);
void reciprocalForward(int64_t size, const float *x, float *y);
void reciprocalBackward(int64_t size, const float *y, const float *dy,
                        float *dx);

/// The activations whose backward reads x (KernelMath.h): clip (ReLU6),
/// hard sigmoid, hard swish, GELU.
void inputActivationForward(math::InputActivation kind,
                            math::ActivationParams params, int64_t size,
                            const float *x, float *y);
void inputActivationBackward(math::InputActivation kind,
                             math::ActivationParams params, int64_t size,
                             const float *x, const float *dy, float *dx);

/// Dropout (forward on x, or backward on dy: the same product) over `rows`
/// rows of `cols` elements, the first being global row `firstRow`.
void dropout(const math::DropoutMask &mask, int64_t rows, int64_t cols,
             int64_t firstRow, const float *x, float *y);

//===----------------------------------------------------------------------===//
// Binary ops with numpy broadcasting of the second operand: out = lhs op rhs,
// where out has lhs's shape and rhs's dims, right-aligned, each equal the
// lhs dim or are 1 (bias [c] against [n, c], [c, 1, 1] against [n, c, h, w],
// a scalar, ...). Rank ≤ 4.
//===----------------------------------------------------------------------===//

// The shape the plan gives (runtime/abi/shapes/ElementwiseShapes.h).
using plan::BroadcastShape;
using plan::makeBroadcastShape;

void addForward(const BroadcastShape &shape, const float *lhs, const float *rhs,
                float *out);
/// out = relu(lhs + rhs): addForward then reluForward, in one pass.
void addReluForward(const BroadcastShape &shape, const float *lhs,
                    const float *rhs, float *out);
/// dx = reluBackward(a + b, y): a gradient summed from two branches and
/// masked by the ReLU output y, in one pass (any operand may be dx).
void addReluBackward(int64_t size, const float *y, const float *a,
                     const float *b, float *dx);
/// dLhs = dOut, dRhs = dOut summed over broadcast dims; either may be null.
void addBackward(const BroadcastShape &shape, const float *dOut, float *dLhs,
                 float *dRhs);
void mulForward(const BroadcastShape &shape, const float *lhs, const float *rhs,
                float *out);
/// dLhs = dOut * rhs, dRhs = sum over broadcast dims of dOut * lhs; either
/// may be null.
void mulBackward(const BroadcastShape &shape, const float *lhs,
                 const float *rhs, const float *dOut, float *dLhs, float *dRhs);
/// out = torch.maximum (with `minimum`, torch.minimum) of lhs and rhs.
void extremumForward(bool minimum, const BroadcastShape &shape,
                     const float *lhs, const float *rhs, float *out);
/// dOut to the operand that won, half to each on a tie; dRhs summed over
/// broadcast dims; either may be null.
void extremumBackward(bool minimum, const BroadcastShape &shape,
                      const float *lhs, const float *rhs, const float *dOut,
                      float *dLhs, float *dRhs);

//===----------------------------------------------------------------------===//
// Constant spatial padding of x [n, c, h, w] into
// y [n, c, h + padTop + padBottom, w + padLeft + padRight]. Pads are ≥ 0.
//===----------------------------------------------------------------------===//

using plan::Pad2dShape; // runtime/abi/shapes/PoolShapes.h

void pad2dForward(const Pad2dShape &shape, float value, const float *x,
                  float *y);
/// dx = the interior of dy.
void pad2dBackward(const Pad2dShape &shape, const float *dy, float *dx);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_ELEMENTWISE_H
