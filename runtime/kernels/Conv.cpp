//===- Conv.cpp - 2-D and 3-D convolution kernels (oneDNN) ----------------===//

#include "runtime/kernels/Conv.h"
#include "runtime/kernels/DnnlSupport.h"

#include <stdexcept>
#include <string>

namespace dpc::kernels {

using dnnl::memory;
using Tag = memory::format_tag;

namespace {

void checkShape(const Conv2dShape &s) {
  if (s.n <= 0 || s.c <= 0 || s.h <= 0 || s.w <= 0 || s.k <= 0 || s.r <= 0 ||
      s.s <= 0 || s.strideH <= 0 || s.strideW <= 0 || s.dilationH <= 0 ||
      s.dilationW <= 0 || s.groups <= 0 || s.c % s.groups != 0 ||
      s.k % s.groups != 0 || s.outH() <= 0 || s.outW() <= 0 ||
      (s.spatialDims != 2 && s.spatialDims != 3) || s.outD() <= 0 ||
      (s.spatialDims == 2 && (s.d != 1 || s.t != 1)) ||
      (s.spatialDims == 3 && (s.blockedX || s.blockedY)))
    throw std::invalid_argument("conv2d: invalid shape");
}

/// The oneDNN view of one convolution: descriptors for every tensor in the
/// callers' layouts (plain, or nChw16c activations), `any` ones for the
/// primitive to pick its blocked layouts (2-3x faster than plain NCHW on few
/// channels, reorders included), and the geometry in oneDNN's conventions
/// (dilation 0 = dense), with a depth for a 3-D one. In bf16 the tensors a pass
/// reads (`low*`) are bf16, so that the reorder into the blocked layout also
/// rounds them, and what it writes (`any*`) stays f32: oneDNN accumulates in
/// f32 and writes it unrounded.
struct ConvDescs {
  memory::desc src, weights, bias, dst;
  memory::desc anySrc, anyWeights, anyDst;
  memory::desc lowSrc, lowWeights, lowDst;
  memory::dims strides, dilates, padL, padR;

  explicit ConvDescs(const Conv2dShape &s) {
    if (s.spatialDims == 3)
      setVolumetric(s);
    else
      setPlanar(s);
    bias = plainDesc({s.k}, Tag::x);
    auto any = [](const memory::desc &plain) {
      return memory::desc(plain.dims(), plain.data_type(), Tag::any);
    };
    anySrc = any(src);
    anyWeights = any(weights);
    anyDst = any(dst);
    lowSrc = lowDesc(anySrc, s.precision);
    lowWeights = lowDesc(anyWeights, s.precision);
    lowDst = lowDesc(anyDst, s.precision);
  }

private:
  void setPlanar(const Conv2dShape &s) {
    src =
        plainDesc({s.n, s.c, s.h, s.w}, s.blockedX ? Tag::nChw16c : Tag::nchw);
    dst = plainDesc({s.n, s.k, s.outH(), s.outW()},
                    s.blockedY ? Tag::nChw16c : Tag::nchw);
    // PyTorch's [k, c/g, r, s] is oneDNN's goihw with g split off k.
    weights =
        s.groups == 1
            ? plainDesc({s.k, s.c, s.r, s.s}, Tag::oihw)
            : plainDesc({s.groups, s.k / s.groups, s.c / s.groups, s.r, s.s},
                        Tag::goihw);
    strides = {s.strideH, s.strideW};
    dilates = {s.dilationH - 1, s.dilationW - 1};
    padL = {s.padTop, s.padLeft};
    padR = {s.padBottom, s.padRight};
  }

  /// The same with the depth first: ncdhw, [k, c/g, t, r, s] as goidhw.
  void setVolumetric(const Conv2dShape &s) {
    src = plainDesc({s.n, s.c, s.d, s.h, s.w}, Tag::ncdhw);
    dst = plainDesc({s.n, s.k, s.outD(), s.outH(), s.outW()}, Tag::ncdhw);
    weights = s.groups == 1 ? plainDesc({s.k, s.c, s.t, s.r, s.s}, Tag::oidhw)
                            : plainDesc({s.groups, s.k / s.groups,
                                         s.c / s.groups, s.t, s.r, s.s},
                                        Tag::goidhw);
    strides = {s.strideD, s.strideH, s.strideW};
    dilates = {s.dilationD - 1, s.dilationH - 1, s.dilationW - 1};
    padL = {s.padFront, s.padTop, s.padLeft};
    padR = {s.padBack, s.padBottom, s.padRight};
  }
};

PrimitiveKey makeKey(PrimitiveKind kind, const Conv2dShape &s, bool bias,
                     bool relu = false) {
  return {{static_cast<int64_t>(kind), bias ? 1 : 0, relu ? 1 : 0,
           static_cast<int64_t>(s.algorithm)},
          plan::getConvGeometryKey(s)};
}

/// Builds a pass's primitive descriptor with the shape's algorithm, or the
/// direct one where oneDNN has no Winograd kernel for it (another CPU than
/// the plan was compiled on, or a pass or shape oneDNN lacks one for).
template <typename MakePd>
auto withAlgorithm(const Conv2dShape &s, MakePd makePd) {
  if (s.algorithm == ConvAlgorithm::Winograd) {
    try {
      return makePd(dnnl::algorithm::convolution_winograd);
    } catch (const dnnl::error &) {
    }
  }
  return makePd(dnnl::algorithm::convolution_direct);
}

dnnl::convolution_forward::primitive_desc
makeForwardPd(KernelContext::Impl &ctx, const ConvDescs &d, bool bias,
              dnnl::prop_kind prop, dnnl::algorithm algorithm,
              bool relu = false) {
  auto desc = bias ? dnnl::convolution_forward::desc(
                         prop, algorithm, d.lowSrc, d.lowWeights, d.bias,
                         d.anyDst, d.strides, d.dilates, d.padL, d.padR)
                   : dnnl::convolution_forward::desc(
                         prop, algorithm, d.lowSrc, d.lowWeights, d.anyDst,
                         d.strides, d.dilates, d.padL, d.padR);
  return {desc, withReluPostOp(defaultAttr(), relu), ctx.engine};
}

dnnl::convolution_forward::primitive_desc
makeForwardPd(KernelContext::Impl &ctx, const Conv2dShape &shape, bool bias,
              bool relu) {
  ConvDescs d(shape);
  return withAlgorithm(shape, [&](dnnl::algorithm algorithm) {
    return makeForwardPd(ctx, d, bias, dnnl::prop_kind::forward_training,
                         algorithm, relu);
  });
}

dnnl::convolution_backward_data::primitive_desc
makeBackwardDataPd(KernelContext::Impl &ctx, const Conv2dShape &shape) {
  ConvDescs d(shape);
  return withAlgorithm(shape, [&](dnnl::algorithm algorithm) {
    auto hint = makeForwardPd(ctx, d, false, dnnl::prop_kind::forward_training,
                              algorithm);
    dnnl::convolution_backward_data::desc desc(
        algorithm, d.anySrc, d.lowWeights, d.lowDst, d.strides, d.dilates,
        d.padL, d.padR);
    return dnnl::convolution_backward_data::primitive_desc(desc, defaultAttr(),
                                                           ctx.engine, hint);
  });
}

dnnl::convolution_backward_weights::primitive_desc
makeBackwardWeightsPd(KernelContext::Impl &ctx, const Conv2dShape &shape,
                      bool bias) {
  ConvDescs d(shape);
  return withAlgorithm(shape, [&](dnnl::algorithm algorithm) {
    auto hint = makeForwardPd(ctx, d, bias, dnnl::prop_kind::forward_training,
                              algorithm);
    auto desc = bias ? dnnl::convolution_backward_weights::desc(
                           algorithm, d.lowSrc, d.anyWeights, d.bias, d.lowDst,
                           d.strides, d.dilates, d.padL, d.padR)
                     : dnnl::convolution_backward_weights::desc(
                           algorithm, d.lowSrc, d.anyWeights, d.lowDst,
                           d.strides, d.dilates, d.padL, d.padR);
    return dnnl::convolution_backward_weights::primitive_desc(
        desc, defaultAttr(), ctx.engine, hint);
  });
}

} // namespace

void conv2dForward(KernelContext &context, const Conv2dShape &shape,
                   const float *x, const float *weights, const float *bias,
                   float *y, bool relu) {
  checkShape(shape);
  auto &ctx = context.getImpl();
  bool hasBias = bias != nullptr;
  ctx.run(
      makeKey(PrimitiveKind::ConvForward, shape, hasBias, relu),
      [&] { return makeForwardPd(ctx, shape, hasBias, relu); },
      [&] {
        ConvDescs d(shape);
        return std::vector<memory::desc>{d.src, d.weights, d.bias, d.dst};
      },
      {{DNNL_ARG_SRC, x},
       {DNNL_ARG_WEIGHTS, weights},
       {DNNL_ARG_BIAS, bias},
       {DNNL_ARG_DST, y}});
}

void conv2dBackwardData(KernelContext &context, const Conv2dShape &shape,
                        const float *dy, const float *weights, float *dx) {
  checkShape(shape);
  auto &ctx = context.getImpl();
  ctx.run(
      makeKey(PrimitiveKind::ConvBackwardData, shape, false),
      [&] { return makeBackwardDataPd(ctx, shape); },
      [&] {
        ConvDescs d(shape);
        return std::vector<memory::desc>{d.dst, d.weights, d.src};
      },
      {{DNNL_ARG_DIFF_DST, dy, shape.dyCast},
       {DNNL_ARG_WEIGHTS, weights},
       {DNNL_ARG_DIFF_SRC, dx}});
}

void conv2dBackwardWeights(KernelContext &context, const Conv2dShape &shape,
                           const float *x, const float *dy, float *dWeights,
                           float *dBias) {
  checkShape(shape);
  ReductionThreadsScope threads(context);
  auto &ctx = context.getImpl();
  bool hasBias = dBias != nullptr;
  ctx.run(
      makeKey(PrimitiveKind::ConvBackwardWeights, shape, hasBias),
      [&] { return makeBackwardWeightsPd(ctx, shape, hasBias); },
      [&] {
        ConvDescs d(shape);
        return std::vector<memory::desc>{d.src, d.dst, d.weights, d.bias};
      },
      {{DNNL_ARG_SRC, x},
       {DNNL_ARG_DIFF_DST, dy, shape.dyCast},
       {DNNL_ARG_DIFF_WEIGHTS, dWeights},
       {DNNL_ARG_DIFF_BIAS, dBias}});
}

std::string conv2dImplementation(KernelContext &context,
                                 const Conv2dShape &shape, ConvPass pass,
                                 bool relu) {
  checkShape(shape);
  auto &ctx = context.getImpl();
  switch (pass) {
  case ConvPass::Forward:
    return makeForwardPd(ctx, shape, /*bias=*/false, relu).impl_info_str();
  case ConvPass::BackwardData:
    return makeBackwardDataPd(ctx, shape).impl_info_str();
  case ConvPass::BackwardWeights:
    return makeBackwardWeightsPd(ctx, shape, /*bias=*/false).impl_info_str();
  }
  throw std::invalid_argument("conv2d: unknown pass");
}

} // namespace dpc::kernels
