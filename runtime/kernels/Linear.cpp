//===- Linear.cpp - Fully connected and matrix-multiply kernels -----------===//

#include "runtime/kernels/Linear.h"
#include "runtime/kernels/DnnlMatmul.h"
#include "runtime/kernels/DnnlSupport.h"

#include <stdexcept>

namespace dpc::kernels {

using dnnl::memory;
using Tag = memory::format_tag;

namespace {

/// The callers' plain f32 tensors, and (`low*`) what a pass reads them as:
/// the same in f32; in bf16 bf16 copies, rounded by the reorder into them,
/// while what it writes stays f32 (oneDNN accumulates in f32).
struct LinearDescs {
  memory::desc src, weights, bias, dst;
  memory::desc lowSrc, lowWeights, lowDst;
  explicit LinearDescs(const LinearShape &s) {
    if (s.n <= 0 || s.in <= 0 || s.out <= 0)
      throw std::invalid_argument("linear: invalid shape");
    src = plainDesc({s.n, s.in}, Tag::nc);
    weights = plainDesc({s.out, s.in}, Tag::oi);
    bias = plainDesc({s.out}, Tag::x);
    dst = plainDesc({s.n, s.out}, Tag::nc);
    lowSrc = lowDesc(src, s.precision);
    lowWeights = lowDesc(weights, s.precision);
    lowDst = lowDesc(dst, s.precision);
  }
};

PrimitiveKey makeKey(PrimitiveKind kind, const LinearShape &s, bool bias,
                     bool relu = false) {
  int64_t precision = static_cast<int64_t>(s.precision);
  return {static_cast<int64_t>(kind),
          s.n,
          s.in,
          s.out,
          bias ? 1 : 0,
          precision,
          relu ? 1 : 0};
}

dnnl::inner_product_forward::primitive_desc
makeForwardPd(KernelContext::Impl &ctx, const LinearDescs &d, bool bias,
              bool relu = false) {
  auto prop = dnnl::prop_kind::forward_training;
  auto desc = bias ? dnnl::inner_product_forward::desc(
                         prop, d.lowSrc, d.lowWeights, d.bias, d.dst)
                   : dnnl::inner_product_forward::desc(prop, d.lowSrc,
                                                       d.lowWeights, d.dst);
  return {desc, withReluPostOp(defaultAttr(), relu), ctx.engine};
}

/// c[rows, cols] = op(a)[rows, inner] · op(b)[inner, cols].
void runMatmul(KernelContext::Impl &ctx, int64_t rows, int64_t inner,
               int64_t cols, bool aTransposed, bool bTransposed, const float *a,
               const float *b, float *c, Precision precision) {
  MatmulProblem p;
  p.rows = rows, p.inner = inner, p.cols = cols;
  p.aTransposed = aTransposed, p.bTransposed = bTransposed;
  p.precision = precision;
  runDnnlMatmul(ctx, p, a, b, c);
}

/// Multiply-adds of one pass (each pass does as many), as FLOPs.
int64_t getFlops(const LinearShape &s) { return 2 * s.n * s.in * s.out; }

} // namespace

void linearForward(KernelContext &context, const LinearShape &shape,
                   const float *x, const float *weights, const float *bias,
                   float *y, bool relu) {
  ReductionThreadsScope threads(context, getFlops(shape));
  auto &ctx = context.getImpl();
  bool hasBias = bias != nullptr;
  ctx.run(
      makeKey(PrimitiveKind::LinearForward, shape, hasBias, relu),
      [&] { return makeForwardPd(ctx, LinearDescs(shape), hasBias, relu); },
      [&] {
        LinearDescs d(shape);
        return std::vector<memory::desc>{d.src, d.weights, d.bias, d.dst};
      },
      {{DNNL_ARG_SRC, x, shape.xCast},
       {DNNL_ARG_WEIGHTS, weights},
       {DNNL_ARG_BIAS, bias},
       {DNNL_ARG_DST, y}});
}

void linearBackwardData(KernelContext &context, const LinearShape &shape,
                        const float *dy, const float *weights, float *dx) {
  ReductionThreadsScope threads(context, getFlops(shape));
  auto &ctx = context.getImpl();
  ctx.run(
      makeKey(PrimitiveKind::LinearBackwardData, shape, false),
      [&] {
        LinearDescs d(shape);
        auto hint = makeForwardPd(ctx, d, false);
        dnnl::inner_product_backward_data::desc desc(d.src, d.lowWeights,
                                                     d.lowDst);
        return dnnl::inner_product_backward_data::primitive_desc(
            desc, defaultAttr(), ctx.engine, hint);
      },
      [&] {
        LinearDescs d(shape);
        return std::vector<memory::desc>{d.dst, d.weights, d.src};
      },
      {{DNNL_ARG_DIFF_DST, dy},
       {DNNL_ARG_WEIGHTS, weights},
       {DNNL_ARG_DIFF_SRC, dx}});
}

void linearBackwardWeights(KernelContext &context, const LinearShape &shape,
                           const float *x, const float *dy, float *dWeights,
                           float *dBias) {
  ReductionThreadsScope threads(context, getFlops(shape));
  auto &ctx = context.getImpl();
  bool hasBias = dBias != nullptr;
  ctx.run(
      makeKey(PrimitiveKind::LinearBackwardWeights, shape, hasBias),
      [&] {
        LinearDescs d(shape);
        auto hint = makeForwardPd(ctx, d, hasBias);
        auto desc = hasBias ? dnnl::inner_product_backward_weights::desc(
                                  d.lowSrc, d.weights, d.bias, d.lowDst)
                            : dnnl::inner_product_backward_weights::desc(
                                  d.lowSrc, d.weights, d.lowDst);
        return dnnl::inner_product_backward_weights::primitive_desc(
            desc, defaultAttr(), ctx.engine, hint);
      },
      [&] {
        LinearDescs d(shape);
        return std::vector<memory::desc>{d.src, d.dst, d.weights, d.bias};
      },
      {{DNNL_ARG_SRC, x, shape.xCast},
       {DNNL_ARG_DIFF_DST, dy},
       {DNNL_ARG_DIFF_WEIGHTS, dWeights},
       {DNNL_ARG_DIFF_BIAS, dBias}});
}

void matmulForward(KernelContext &context, const MatmulShape &shape,
                   const float *a, const float *b, float *c) {
  if (shape.n <= 0 || shape.k <= 0 || shape.m <= 0)
    throw std::invalid_argument("matmul: invalid shape");
  ReductionThreadsScope threads(context, 2 * shape.n * shape.k * shape.m);
  runMatmul(context.getImpl(), shape.n, shape.k, shape.m, false, false, a, b, c,
            shape.precision);
}

void matmulBackward(KernelContext &context, const MatmulShape &shape,
                    const float *a, const float *b, const float *dc, float *da,
                    float *db) {
  if (shape.n <= 0 || shape.k <= 0 || shape.m <= 0)
    throw std::invalid_argument("matmul: invalid shape");
  ReductionThreadsScope threads(context, 2 * shape.n * shape.k * shape.m);
  auto &ctx = context.getImpl();
  // da[n, k] = dc[n, m] · bᵀ, with b [k, m] read as its transpose [m, k].
  if (da)
    runMatmul(ctx, shape.n, shape.m, shape.k, false, true, dc, b, da,
              shape.precision);
  // db[k, m] = aᵀ · dc, with a [n, k] read as its transpose [k, n].
  if (db)
    runMatmul(ctx, shape.k, shape.n, shape.m, true, false, a, dc, db,
              shape.precision);
}

} // namespace dpc::kernels
