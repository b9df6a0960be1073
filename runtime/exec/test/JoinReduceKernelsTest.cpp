//===- JoinReduceKernelsTest.cpp - Concat, Split, ReduceSum vs naive ------===//
//
// The CPU kernels behind nn.concat, nn.split (and so ONNX Slice, which
// imports as the middle part of a split), nn.reduce_sum (and ReduceMean,
// which imports as a sum times the reciprocal count), nn.reduce_max and
// nn.reduce_min and their gradient, run through the
// backend's dispatch on every axis and reduced-dim set of 4-D tensors and
// compared with loops over coordinates that share nothing with the kernels'
// row/stride arithmetic (runtime/abi/KernelShapes.cpp's JoinShape,
// KernelElements.h's ReduceIndex).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelDispatch.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/kernels/KernelElements.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace dpc::rt {
namespace {

using plan::DType;
using plan::Kernel;
using plan::KernelCall;
using plan::TensorArg;

/// A present tensor over host memory.
template <typename T>
TensorArg tensor(std::vector<T> &data, std::vector<int64_t> dims, DType dtype) {
  return {true, data.data(), dtype, std::move(dims)};
}

/// An Instruction holding `attrs`, kept alive by the builder.
template <typename AttrsT>
const plan::Instruction *instruction(flatbuffers::FlatBufferBuilder &builder,
                                     AttrsT attrs) {
  plan::InstructionT object;
  object.attrs.Set(std::move(attrs));
  builder.Finish(plan::Instruction::Pack(builder, &object));
  return flatbuffers::GetRoot<plan::Instruction>(builder.GetBufferPointer());
}

int64_t product(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// The row-major coordinates of flat index `i` of `dims`.
std::vector<int64_t> coordinatesOf(int64_t i,
                                   const std::vector<int64_t> &dims) {
  std::vector<int64_t> c(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    c[d] = i % dims[d];
    i /= dims[d];
  }
  return c;
}

int64_t flatIndexOf(const std::vector<int64_t> &c,
                    const std::vector<int64_t> &dims) {
  int64_t i = 0;
  for (size_t d = 0; d < dims.size(); ++d)
    i = i * dims[d] + c[d];
  return i;
}

/// Parts of [2, 3, 4, 5] whose sizes along `axis` are `sizes`: the whole's
/// element at coordinate c along the axis comes from the part holding c.
template <typename T> void checkJoinOnAxis(int64_t axis, DType dtype) {
  SCOPED_TRACE("axis " + std::to_string(axis));
  std::vector<int64_t> base = {2, 3, 4, 5}, sizes = {1, 3, 2};
  std::vector<std::vector<int64_t>> partDims;
  std::vector<std::vector<T>> parts;
  std::vector<int64_t> wholeDims = base;
  wholeDims[axis] = 0;
  for (size_t p = 0; p < sizes.size(); ++p) {
    std::vector<int64_t> dims = base;
    dims[axis] = sizes[p];
    wholeDims[axis] += sizes[p];
    std::vector<T> values(product(dims));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<T>(1000 * (p + 1) + i); // exact in f32 and i32
    partDims.push_back(dims);
    parts.push_back(std::move(values));
  }
  // The naive concatenation, by output coordinates.
  std::vector<T> expected(product(wholeDims));
  for (int64_t i = 0; i < int64_t(expected.size()); ++i) {
    std::vector<int64_t> c = coordinatesOf(i, wholeDims);
    size_t p = 0;
    while (c[axis] >= sizes[p])
      c[axis] -= sizes[p++];
    expected[i] = parts[p][flatIndexOf(c, partDims[p])];
  }

  flatbuffers::FlatBufferBuilder builder;
  plan::ConcatAttrsT attrs;
  attrs.axis = axis;
  kernels::KernelContext context;
  std::vector<T> whole(expected.size());
  KernelCall concat;
  concat.kernel = Kernel::ConcatForward;
  concat.instruction = instruction(builder, attrs);
  for (size_t p = 0; p < parts.size(); ++p)
    concat.operands.push_back(tensor(parts[p], partDims[p], dtype));
  concat.results = {tensor(whole, wholeDims, dtype)};
  runCpuKernel(context, concat);
  EXPECT_EQ(whole, expected) << "concat";

  // Split gives the parts back; its middle part is the slice
  // [sizes[0], sizes[0] + sizes[1]) of the axis (ONNX Slice's import).
  std::vector<std::vector<T>> got;
  for (const std::vector<int64_t> &dims : partDims)
    got.emplace_back(product(dims), T(-1));
  KernelCall split;
  split.kernel = Kernel::SplitForward;
  split.instruction = concat.instruction;
  split.operands = {tensor(whole, wholeDims, dtype)};
  for (size_t p = 0; p < got.size(); ++p)
    split.results.push_back(tensor(got[p], partDims[p], dtype));
  runCpuKernel(context, split);
  for (size_t p = 0; p < parts.size(); ++p)
    EXPECT_EQ(got[p], parts[p]) << "split part " << p;
  std::vector<T> slice;
  for (int64_t i = 0; i < int64_t(whole.size()); ++i) {
    std::vector<int64_t> c = coordinatesOf(i, wholeDims);
    if (c[axis] >= sizes[0] && c[axis] < sizes[0] + sizes[1])
      slice.push_back(whole[i]);
  }
  EXPECT_EQ(got[1], slice) << "the slice";
}

TEST(JoinKernelsTest, ConcatAndSplitMatchNaiveLoopsOnEveryAxis) {
  for (int64_t axis = 0; axis < 4; ++axis) {
    checkJoinOnAxis<float>(axis, DType::F32);
    checkJoinOnAxis<int32_t>(axis, DType::I32); // token ids
  }
}

TEST(JoinKernelsTest, AnAxisOutOfRangeIsRefused) {
  std::vector<float> a(4), b(2), whole(6, 7.f);
  kernels::KernelContext context;
  for (int64_t axis : {-1, 2}) {
    flatbuffers::FlatBufferBuilder builder;
    plan::ConcatAttrsT attrs;
    attrs.axis = axis;
    KernelCall concat;
    concat.kernel = Kernel::ConcatForward;
    concat.instruction = instruction(builder, attrs);
    concat.operands = {tensor(a, {2, 2}, DType::F32),
                       tensor(b, {2, 1}, DType::F32)};
    concat.results = {tensor(whole, {2, 3}, DType::F32)};
    try {
      runCpuKernel(context, concat);
      FAIL() << "expected an error for axis " << axis;
    } catch (const std::runtime_error &error) {
      EXPECT_NE(std::string(error.what()).find("out of range"),
                std::string::npos)
          << error.what();
    }
    EXPECT_EQ(whole, std::vector<float>(6, 7.f)) << "nothing written";
  }
}

/// x's sum over the dims `reduced` marks, in double, by coordinates.
std::vector<double> naiveSum(const std::vector<float> &x,
                             const std::vector<int64_t> &dims,
                             const std::vector<bool> &reduced) {
  std::vector<int64_t> keptDims;
  for (size_t d = 0; d < dims.size(); ++d)
    if (!reduced[d])
      keptDims.push_back(dims[d]);
  std::vector<double> sums(product(keptDims), 0.0);
  for (int64_t i = 0; i < int64_t(x.size()); ++i) {
    std::vector<int64_t> c = coordinatesOf(i, dims), kept;
    for (size_t d = 0; d < dims.size(); ++d)
      if (!reduced[d])
        kept.push_back(c[d]);
    sums[flatIndexOf(kept, keptDims)] += x[i];
  }
  return sums;
}

std::vector<float> randomValues(int64_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t state = seed * 2654435761u + 1;
  for (float &x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) / 16777216.f * 4.f - 2.f;
  }
  return v;
}

/// Runs ReduceSum over `dims` of x; the sums are double, rounded once, so
/// they equal the naive double sum rounded to float up to the order of the
/// additions (an ulp at most).
std::vector<float> runReduceSum(std::vector<float> &x,
                                const std::vector<int64_t> &xDims,
                                const std::vector<int64_t> &dims,
                                int64_t kept) {
  flatbuffers::FlatBufferBuilder builder;
  plan::ReduceAttrsT attrs;
  attrs.dims = dims;
  kernels::KernelContext context;
  std::vector<float> y(kept, NAN);
  std::vector<int64_t> yDims =
      kept == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{kept};
  KernelCall call;
  call.kernel = Kernel::ReduceSum;
  call.instruction = instruction(builder, attrs);
  call.operands = {tensor(x, xDims, DType::F32)};
  call.results = {tensor(y, yDims, DType::F32)};
  runCpuKernel(context, call);
  return y;
}

void expectCloseToSums(const std::vector<float> &y,
                       const std::vector<double> &sums, const char *what) {
  ASSERT_EQ(y.size(), sums.size()) << what;
  for (size_t o = 0; o < sums.size(); ++o)
    EXPECT_NEAR(y[o], sums[o], 1e-6 * std::max(1.0, std::fabs(sums[o])))
        << what << " output " << o;
}

TEST(ReduceKernelsTest, ReduceSumMatchesANaiveSumForEveryDimSet) {
  std::vector<int64_t> dims = {3, 4, 5, 6};
  std::vector<float> x = randomValues(product(dims), 1);
  for (int mask = 1; mask < 16; ++mask) {
    std::vector<bool> reduced(4);
    std::vector<int64_t> reducedDims;
    int64_t kept = 1;
    for (int d = 0; d < 4; ++d) {
      reduced[d] = mask >> d & 1;
      if (reduced[d])
        reducedDims.push_back(d);
      else
        kept *= dims[d];
    }
    SCOPED_TRACE("mask " + std::to_string(mask));
    expectCloseToSums(runReduceSum(x, dims, reducedDims, kept),
                      naiveSum(x, dims, reduced), "reduce_sum");
  }
}

// Leading dims summed away over more than one 512-output chunk: the
// kernel's row-by-row path (bias gradients).
TEST(ReduceKernelsTest, LeadingDimSumsSpanChunks) {
  std::vector<int64_t> dims = {37, 3, 700};
  std::vector<float> x = randomValues(product(dims), 2);
  expectCloseToSums(runReduceSum(x, dims, {0, 1}, 700),
                    naiveSum(x, dims, {true, true, false}), "leading dims");
}

// The CUDA kernel sums each output with KernelElements.h's reduceSum; the
// CPU kernel, on its own paths (per output, or leading dims row by row
// across chunks), must give the same bits.
TEST(ReduceKernelsTest, ReduceSumEqualsTheCudaBodyBitForBit) {
  struct Case {
    std::vector<int64_t> dims, reduced;
  };
  for (const Case &c : {Case{{3, 4, 5, 6}, {1, 3}}, Case{{3, 4, 5, 6}, {0}},
                        Case{{37, 3, 700}, {0, 1}}, Case{{5, 9}, {1}}}) {
    std::vector<float> x = randomValues(product(c.dims), 6);
    bool reduced[8] = {};
    int64_t kept = 1;
    for (int64_t d : c.reduced)
      reduced[d] = true;
    for (size_t d = 0; d < c.dims.size(); ++d)
      kept *= reduced[d] ? 1 : c.dims[d];
    std::vector<float> y = runReduceSum(x, c.dims, c.reduced, kept);
    kernels::elements::ReduceIndex r = kernels::elements::makeReduceIndex(
        static_cast<int>(c.dims.size()), c.dims.data(), reduced);
    for (int64_t o = 0; o < kept; ++o) {
      float body = kernels::elements::reduceSum(r, o, x.data());
      ASSERT_EQ(std::memcmp(&y[o], &body, sizeof(float)), 0)
          << "output " << o << ": " << y[o] << " vs " << body;
    }
  }
}

// ReduceMean imports as nn.reduce_sum times the constant 1 / count
// (frontend/onnx: a Mul by a 0-d constant): the two kernels give the mean.
TEST(ReduceKernelsTest, ReduceMeanIsTheSumTimesTheReciprocalCount) {
  std::vector<int64_t> dims = {4, 3, 10};
  std::vector<float> x = randomValues(product(dims), 3);
  std::vector<float> sums = runReduceSum(x, dims, {2}, 12);
  std::vector<float> scale = {1.f / 10.f}, mean(12, NAN);
  kernels::KernelContext context;
  KernelCall mul;
  mul.kernel = Kernel::MulForward;
  mul.operands = {tensor(sums, {4, 3}, DType::F32),
                  tensor(scale, {}, DType::F32)};
  mul.results = {tensor(mean, {4, 3}, DType::F32)};
  runCpuKernel(context, mul);
  std::vector<double> expected = naiveSum(x, dims, {false, false, true});
  for (double &v : expected)
    v /= 10.0;
  expectCloseToSums(mean, expected, "reduce_mean");
}

/// Runs `kernel` (ReduceMax, ReduceMin: (x) -> (y); ReduceExtremumBackward:
/// (x, y, dy) -> (dx)) over `dims` of x.
std::vector<float> runReduction(Kernel kernel,
                                std::vector<std::vector<float>> ins,
                                const std::vector<int64_t> &xDims,
                                const std::vector<int64_t> &dims,
                                int64_t kept) {
  flatbuffers::FlatBufferBuilder builder;
  plan::ReduceAttrsT attrs;
  attrs.dims = dims;
  kernels::KernelContext context;
  bool backward = kernel == Kernel::ReduceExtremumBackward;
  std::vector<float> out(backward ? ins[0].size() : kept, NAN);
  KernelCall call;
  call.kernel = kernel;
  call.instruction = instruction(builder, attrs);
  call.operands.push_back(tensor(ins[0], xDims, DType::F32));
  for (size_t i = 1; i < ins.size(); ++i)
    call.operands.push_back(tensor(ins[i], {kept}, DType::F32));
  call.results = {backward ? tensor(out, xDims, DType::F32)
                           : tensor(out, {kept}, DType::F32)};
  runCpuKernel(context, call);
  return out;
}

// torch.amax and amin over every dim set of a 4-D tensor with ties (values
// on a coarse grid), and their gradient: dy shared evenly by the elements
// equal to the extremum (PyTorch's rule), against loops by coordinates.
TEST(ReduceKernelsTest, ReduceMaxAndMinAndTheirGradientMatchNaiveLoops) {
  std::vector<int64_t> dims = {2, 3, 4, 5};
  std::vector<float> x = randomValues(product(dims), 4);
  for (float &v : x)
    v = std::round(v * 2.f); // -4 .. 4: many ties
  for (bool minimum : {false, true}) {
    for (int mask = 1; mask < 16; ++mask) {
      std::vector<bool> reduced(4);
      std::vector<int64_t> reducedDims, keptDims;
      for (int d = 0; d < 4; ++d) {
        reduced[d] = mask >> d & 1;
        if (reduced[d])
          reducedDims.push_back(d);
        else
          keptDims.push_back(dims[d]);
      }
      int64_t kept = product(keptDims);
      SCOPED_TRACE(std::string(minimum ? "min" : "max") + " mask " +
                   std::to_string(mask));
      std::vector<float> expected(kept, minimum ? INFINITY : -INFINITY);
      std::vector<int64_t> group(x.size());
      for (int64_t i = 0; i < int64_t(x.size()); ++i) {
        std::vector<int64_t> c = coordinatesOf(i, dims), k;
        for (int d = 0; d < 4; ++d)
          if (!reduced[d])
            k.push_back(c[d]);
        group[i] = flatIndexOf(k, keptDims);
        float &e = expected[group[i]];
        e = minimum ? std::min(e, x[i]) : std::max(e, x[i]);
      }
      std::vector<float> y =
          runReduction(minimum ? Kernel::ReduceMin : Kernel::ReduceMax, {x},
                       dims, reducedDims, kept);
      ASSERT_EQ(y, expected);
      std::vector<float> dy = randomValues(kept, 5), ties(kept, 0.f);
      for (int64_t i = 0; i < int64_t(x.size()); ++i)
        ties[group[i]] += x[i] == y[group[i]];
      std::vector<float> dx = runReduction(Kernel::ReduceExtremumBackward,
                                           {x, y, dy}, dims, reducedDims, kept);
      for (int64_t i = 0; i < int64_t(x.size()); ++i) {
        int64_t o = group[i];
        ASSERT_EQ(dx[i], x[i] == y[o] ? dy[o] / ties[o] : 0.f) << "at " << i;
      }
    }
  }
}

TEST(ReduceKernelsTest, ABadDimIsRefused) {
  std::vector<float> x(6), y(6);
  flatbuffers::FlatBufferBuilder builder;
  plan::ReduceAttrsT attrs;
  attrs.dims = {2};
  kernels::KernelContext context;
  KernelCall call;
  call.kernel = Kernel::ReduceSum;
  call.instruction = instruction(builder, attrs);
  call.operands = {tensor(x, {2, 3}, DType::F32)};
  call.results = {tensor(y, {2}, DType::F32)};
  try {
    runCpuKernel(context, call);
    FAIL() << "expected an error";
  } catch (const std::runtime_error &error) {
    EXPECT_NE(std::string(error.what()).find("out of range"), std::string::npos)
        << error.what();
  }
}

} // namespace
} // namespace dpc::rt
