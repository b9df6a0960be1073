//===- KernelElementsTest.cpp - the CUDA kernels' bodies on the CPU -------===//
//
// runtime/kernels/KernelElements.h holds what each index-heavy CUDA kernel
// computes for one output element; the kernels call it per thread. Here the
// same functions run on the CPU for every element and must equal the CPU
// kernels of runtime/kernels -- bit for bit, since both sum in the same
// order (pooling backward gathers where the CPU scatters). Built with or
// without the CUDA backend: no GPU is needed to check the GPU's algorithms.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Embedding.h"
#include "runtime/kernels/LayerNorm.h"
#include "runtime/kernels/Pool.h"
#include "runtime/kernels/Softmax.h"
#include "runtime/kernels/test/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace dpc::kernels::elements {
namespace {

using kernels::test::randomVector;

/// Bitwise equality (-0 and -inf included), with the first difference. A
/// NaN equals any NaN: which operand's NaN a product or sum passes on (and
/// so its sign) is the compiler's choice of operand order, not the math's.
void expectSameBits(const std::vector<float> &actual,
                    const std::vector<float> &expected, const char *what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_TRUE(std::memcmp(&actual[i], &expected[i], sizeof(float)) == 0 ||
                (std::isnan(actual[i]) && std::isnan(expected[i])))
        << what << " element " << i << ": " << actual[i] << " vs "
        << expected[i];
}

Pool2dShape pool(int64_t h, int64_t w, int64_t k, int64_t stride,
                 int64_t padBegin, int64_t padEnd, int64_t dilation, bool ceil,
                 bool includePad) {
  Pool2dShape s;
  s.n = 2, s.c = 3, s.h = h, s.w = w;
  s.kernelH = s.kernelW = k;
  s.strideH = s.strideW = stride;
  s.padTop = s.padLeft = padBegin;
  s.padBottom = s.padRight = padEnd;
  s.dilationH = s.dilationW = dilation;
  s.ceilMode = ceil;
  s.countIncludePad = includePad;
  return s;
}

std::vector<Pool2dShape> poolShapes(bool average) {
  std::vector<Pool2dShape> shapes = {
      pool(8, 8, 2, 2, 0, 0, 1, false, true),  // LeNet's
      pool(7, 9, 3, 2, 1, 1, 1, false, true),  // overlapping, padded
      pool(7, 7, 3, 2, 1, 1, 1, true, true),   // ceil mode
      pool(6, 5, 3, 1, 1, 1, 1, false, false), // stride 1, no pad count
      pool(9, 9, 3, 3, 1, 1, 1, true, false),
      pool(8, 7, 2, 3, 1, 0, 1, true, true), // stride above kernel
  };
  if (!average) {
    shapes.push_back(pool(9, 9, 3, 2, 1, 1, 2, false, true)); // dilated
    shapes.push_back(pool(10, 8, 2, 1, 0, 1, 3, true, true));
  }
  return shapes;
}

TEST(KernelElementsTest, MaxPoolingMatchesTheCpuKernelBitForBit) {
  for (const Pool2dShape &s : poolShapes(false)) {
    int64_t in = s.n * s.c * s.h * s.w, out = s.n * s.c * s.outH() * s.outW();
    // Ties (rounded values) test the first-maximum rule.
    std::vector<float> x = randomVector(in, 1);
    for (float &v : x)
      v = std::round(v * 4.f) / 4.f;
    std::vector<float> dy = randomVector(out, 2);
    std::vector<float> y(out), dx(in), gotY(out), gotDx(in);
    kernels::maxPool2dForward(s, x.data(), y.data());
    kernels::maxPool2dBackward(s, x.data(), dy.data(), dx.data());
    for (int64_t i = 0; i < out; ++i)
      gotY[i] = maxPoolForward(s, i, x.data());
    for (int64_t i = 0; i < in; ++i)
      gotDx[i] = maxPoolBackward(s, i, x.data(), dy.data());
    expectSameBits(gotY, y, "max pool forward");
    expectSameBits(gotDx, dx, "max pool backward");
  }
}

TEST(KernelElementsTest, AvgPoolingMatchesTheCpuKernelBitForBit) {
  for (const Pool2dShape &s : poolShapes(true)) {
    int64_t in = s.n * s.c * s.h * s.w, out = s.n * s.c * s.outH() * s.outW();
    std::vector<float> x = randomVector(in, 3), dy = randomVector(out, 4);
    std::vector<float> y(out), dx(in), gotY(out), gotDx(in);
    kernels::avgPool2dForward(s, x.data(), y.data());
    kernels::avgPool2dBackward(s, dy.data(), dx.data());
    for (int64_t i = 0; i < out; ++i)
      gotY[i] = avgPoolForward(s, i, x.data());
    for (int64_t i = 0; i < in; ++i)
      gotDx[i] = avgPoolBackward(s, i, dy.data());
    expectSameBits(gotY, y, "avg pool forward");
    expectSameBits(gotDx, dx, "avg pool backward");
  }
}

TEST(KernelElementsTest, GlobalAvgPoolingMatchesTheCpuKernel) {
  int64_t n = 3, c = 4, h = 5, w = 6;
  std::vector<float> x = randomVector(n * c * h * w, 5), y(n * c), got(n * c);
  kernels::globalAvgPool2dForward(n, c, h, w, x.data(), y.data());
  for (int64_t p = 0; p < n * c; ++p)
    got[p] = globalAvgPoolForward(p, h * w, x.data());
  expectSameBits(got, y, "global avg pool");
}

TEST(KernelElementsTest, PaddingMatchesTheCpuKernel) {
  kernels::Pad2dShape s{2, 3, 4, 5, 1, 2, 0, 3};
  int64_t in = s.n * s.c * s.h * s.w, out = s.n * s.c * s.outH() * s.outW();
  std::vector<float> x = randomVector(in, 6), dy = randomVector(out, 7);
  std::vector<float> y(out), dx(in), gotY(out), gotDx(in);
  kernels::pad2dForward(s, -2.5f, x.data(), y.data());
  kernels::pad2dBackward(s, dy.data(), dx.data());
  for (int64_t i = 0; i < out; ++i)
    gotY[i] = padForward(s, -2.5f, i, x.data());
  for (int64_t i = 0; i < in; ++i)
    gotDx[i] = padBackward(s, i, dy.data());
  expectSameBits(gotY, y, "pad forward");
  expectSameBits(gotDx, dx, "pad backward");
}

TEST(KernelElementsTest, BroadcastingMatchesTheCpuKernels) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{2, 3, 4, 5}, {3, 1, 1}}, // a per-channel bias
      {{2, 3, 4, 5}, {5}},       // the last dim
      {{6, 7}, {6, 1}},          // a column
      {{2, 3, 4, 5}, {2, 3, 4, 5}},
      {{4, 5}, {1}}};
  for (const auto &[lhsDims, rhsDims] : cases) {
    BroadcastShape s = kernels::makeBroadcastShape(lhsDims, rhsDims);
    int64_t out = s.out[0] * s.out[1] * s.out[2] * s.out[3];
    int64_t rhs = s.rhs[0] * s.rhs[1] * s.rhs[2] * s.rhs[3];
    std::vector<float> a = randomVector(out, 8), b = randomVector(rhs, 9),
                       dOut = randomVector(out, 10);
    std::vector<float> sum(out), product(out), gotSum(out), gotProduct(out);
    kernels::addForward(s, a.data(), b.data(), sum.data());
    kernels::mulForward(s, a.data(), b.data(), product.data());
    for (int64_t i = 0; i < out; ++i) {
      gotSum[i] = a[i] + b[rhsIndexOf(s, i)];
      gotProduct[i] = a[i] * b[rhsIndexOf(s, i)];
    }
    expectSameBits(gotSum, sum, "add forward");
    expectSameBits(gotProduct, product, "mul forward");

    std::vector<float> dA(out), dB(rhs), mulDa(out), mulDb(rhs), gotDb(rhs),
        gotMulDb(rhs);
    kernels::addBackward(s, dOut.data(), dA.data(), dB.data());
    kernels::mulBackward(s, a.data(), b.data(), dOut.data(), mulDa.data(),
                         mulDb.data());
    for (int64_t j = 0; j < rhs; ++j) {
      gotDb[j] = reduceToRhs(s, j, dOut.data(), nullptr);
      gotMulDb[j] = reduceToRhs(s, j, dOut.data(), a.data());
    }
    expectSameBits(gotDb, dB, "add backward (rhs)");
    expectSameBits(gotMulDb, mulDb, "mul backward (rhs)");

    // Maximum and minimum, with ties planted.
    for (int64_t i = 0; i < out; i += 3)
      a[i] = b[rhsIndexOf(s, i)];
    for (bool minimum : {false, true}) {
      std::vector<float> y(out), da(out), db(rhs), gotY(out), gotDa(out),
          gotDb2(rhs);
      kernels::extremumForward(minimum, s, a.data(), b.data(), y.data());
      kernels::extremumBackward(minimum, s, a.data(), b.data(), dOut.data(),
                                da.data(), db.data());
      for (int64_t i = 0; i < out; ++i) {
        float r = b[rhsIndexOf(s, i)];
        gotY[i] = math::extremum(minimum, a[i], r);
        gotDa[i] = dOut[i] * math::extremumShare(minimum, a[i], r);
      }
      for (int64_t j = 0; j < rhs; ++j)
        gotDb2[j] =
            extremumToRhs(minimum, s, j, a.data(), b.data(), dOut.data());
      expectSameBits(gotY, y, "extremum forward");
      expectSameBits(gotDa, da, "extremum backward (lhs)");
      expectSameBits(gotDb2, db, "extremum backward (rhs)");
    }
  }
}

TEST(KernelElementsTest, ReduceSumSumsTheReducedDims) {
  std::vector<int64_t> dims = {3, 4, 5, 2};
  std::vector<float> x = randomVector(3 * 4 * 5 * 2, 11);
  for (int mask = 1; mask < 16; ++mask) {
    bool reduced[4];
    for (int d = 0; d < 4; ++d)
      reduced[d] = mask >> d & 1;
    ReduceIndex r = makeReduceIndex(4, dims.data(), reduced);
    // Reference: accumulate every element into its kept position.
    std::vector<double> expected(r.kept, 0.0);
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < 4; ++b)
        for (int64_t c = 0; c < 5; ++c)
          for (int64_t d = 0; d < 2; ++d) {
            int64_t idx[4] = {a, b, c, d}, kept = 0;
            for (int k = 0; k < 4; ++k)
              if (!reduced[k])
                kept = kept * dims[k] + idx[k];
            expected[kept] += x[((a * 4 + b) * 5 + c) * 2 + d];
          }
    for (int64_t o = 0; o < r.kept; ++o)
      EXPECT_NEAR(reduceSum(r, o, x.data()), expected[o], 1e-5)
          << "mask " << mask << " output " << o;
  }
}

// The activations whose backward reads x: the CUDA kernels apply
// math::inputActivation* per element; so must the CPU loops, NaN, the
// infinities and the kinks included.
TEST(KernelElementsTest, InputActivationsMatchTheCpuKernelsBitForBit) {
  std::vector<float> x = randomVector(512, 11, -8.f, 8.f);
  for (float special : {0.f, -0.f, 6.f, 3.f, -3.f, 1e30f, -1e30f})
    x.push_back(special);
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  x.push_back(std::numeric_limits<float>::infinity());
  std::vector<float> dy = randomVector(x.size(), 12);
  using math::InputActivation;
  for (auto [kind, params] :
       {std::pair(InputActivation::Clip, math::ActivationParams{0.f, 6.f}),
        std::pair(InputActivation::HardSigmoid,
                  math::ActivationParams{0.2f, 0.5f}),
        std::pair(InputActivation::HardSwish, math::ActivationParams{}),
        std::pair(InputActivation::Gelu, math::ActivationParams{}),
        std::pair(InputActivation::GeluTanh, math::ActivationParams{}),
        std::pair(InputActivation::Erf, math::ActivationParams{}),
        std::pair(InputActivation::LeakyRelu,
                  math::ActivationParams{0.1f, 0.f}),
        std::pair(InputActivation::Elu, math::ActivationParams{0.7f, 0.f}),
        std::pair(InputActivation::Selu,
                  math::ActivationParams{1.6732632f, 1.050701f}),
        std::pair(InputActivation::Celu, math::ActivationParams{0.8f, 0.f}),
        std::pair(InputActivation::Softplus, math::ActivationParams{1.f, 20.f}),
        std::pair(InputActivation::Mish, math::ActivationParams{}),
        std::pair(InputActivation::Abs, math::ActivationParams{}),
        std::pair(InputActivation::Log, math::ActivationParams{}),
        std::pair(InputActivation::LogSigmoid, math::ActivationParams{}),
        std::pair(InputActivation::Exp, math::ActivationParams{}),
        std::pair(InputActivation::Sqrt, math::ActivationParams{}),
        std::pair(InputActivation::Pow, math::ActivationParams{0.75f, 0.f}),
        std::pair(InputActivation::Sin, math::ActivationParams{}),
        std::pair(InputActivation::Cos, math::ActivationParams{}),
        std::pair(InputActivation::Sign, math::ActivationParams{}),
        std::pair(InputActivation::Floor, math::ActivationParams{}),
        std::pair(InputActivation::Ceil, math::ActivationParams{})}) {
    SCOPED_TRACE("activation " + std::to_string(static_cast<int>(kind)));
    std::vector<float> y(x.size()), dx(x.size()), yBody(x.size()),
        dxBody(x.size());
    inputActivationForward(kind, params, x.size(), x.data(), y.data());
    inputActivationBackward(kind, params, x.size(), x.data(), dy.data(),
                            dx.data());
    for (size_t i = 0; i < x.size(); ++i) {
      yBody[i] = math::inputActivationForward(kind, params, x[i]);
      dxBody[i] = math::inputActivationBackward(kind, params, dy[i], x[i]);
    }
    expectSameBits(y, yBody, "forward");
    expectSameBits(dx, dxBody, "backward");
  }
}

// The activations whose backward reads y: the CUDA kernel applies their
// math:: functions per element, as the CPU loops must (ReLU, sigmoid and
// tanh run through oneDNN-free loops of the same functions; reciprocal,
// Div by a tensor, with its zeros, infinities and NaN).
TEST(KernelElementsTest, ReciprocalMatchesTheCpuKernelsBitForBit) {
  std::vector<float> x = randomVector(512, 21, -8.f, 8.f);
  for (float special : {0.f, -0.f, 1e-40f, -1e-40f, 1e30f, -1e30f})
    x.push_back(special);
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  x.push_back(std::numeric_limits<float>::infinity());
  std::vector<float> dy = randomVector(x.size(), 22);
  std::vector<float> y(x.size()), dx(x.size()), yBody(x.size()),
      dxBody(x.size());
  kernels::reciprocalForward(x.size(), x.data(), y.data());
  kernels::reciprocalBackward(x.size(), y.data(), dy.data(), dx.data());
  for (size_t i = 0; i < x.size(); ++i) {
    yBody[i] = math::reciprocalForward(x[i]);
    dxBody[i] = math::reciprocalBackward(dy[i], y[i]);
  }
  expectSameBits(y, yBody, "forward");
  expectSameBits(dx, dxBody, "backward");
  EXPECT_EQ(y[512], std::numeric_limits<float>::infinity()) << "1 / +0";
  EXPECT_EQ(y[513], -std::numeric_limits<float>::infinity()) << "1 / -0";
}

TEST(KernelElementsTest, DropoutMatchesTheCpuKernelBitForBit) {
  // Rows of 10 end inside a draw of four; a replica from global row 5.
  int64_t rows = 6, cols = 10, firstRow = 5;
  std::vector<float> x = randomVector(rows * cols, 13);
  x[3] = std::numeric_limits<float>::infinity();
  // Element-wise, row-wise, and one draw per plane of 5 with
  // AlphaDropout's affine form.
  for (int variant : {0, 1, 2}) {
    math::DropoutMask mask =
        math::makeDropoutMask(99, 4, 3, 0.4, /*rowwise=*/variant == 1);
    if (variant == 2) {
      mask.span = 5;
      mask.scale = 0.886f, mask.shift = 0.779f, mask.fill = -0.779f;
    }
    std::vector<float> y(x.size()), yBody(x.size());
    kernels::dropout(mask, rows, cols, firstRow, x.data(), y.data());
    for (int64_t i = 0; i < rows * cols; ++i)
      yBody[i] = elements::dropout(mask, cols, firstRow, i, x.data());
    expectSameBits(y, yBody,
                   variant == 0   ? "dropout"
                   : variant == 1 ? "rowwise dropout"
                                  : "per-plane alpha dropout");
  }
}

// The CUDA softmax and log-softmax: a thread per row. Rows with -inf
// (a causal attention mask), large logits, a row of one, and rows of 1000
// (the double sums must round alike).
TEST(KernelElementsTest, SoftmaxMatchesTheCpuKernelsBitForBit) {
  const float inf = std::numeric_limits<float>::infinity();
  for (auto [rows, cols] :
       {std::pair<int64_t, int64_t>{7, 16}, {3, 1}, {2, 1000}, {64, 10}}) {
    std::vector<float> x = randomVector(rows * cols, 19, -8.f, 8.f);
    if (cols == 16)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = i + 1; j < cols; ++j)
          x[i * cols + j] = -inf; // row i sees tokens 0..i
    if (cols == 10)
      x[3] = 80.f, x[4] = 88.f; // exp would overflow without the max
    std::vector<float> dy = randomVector(x.size(), 20);
    for (bool log : {false, true}) {
      SCOPED_TRACE((log ? "log_softmax " : "softmax ") + std::to_string(rows) +
                   "x" + std::to_string(cols));
      std::vector<float> y(x.size()), dx(x.size()), yBody(x.size()),
          dxBody(x.size());
      if (log) {
        kernels::logSoftmaxForward(rows, cols, x.data(), y.data());
        kernels::logSoftmaxBackward(rows, cols, y.data(), dy.data(), dx.data());
      } else {
        kernels::softmaxForward(rows, cols, x.data(), y.data());
        kernels::softmaxBackward(rows, cols, y.data(), dy.data(), dx.data());
      }
      for (int64_t i = 0; i < rows; ++i) {
        softmaxRowForward(log, x.data() + i * cols, cols,
                          yBody.data() + i * cols);
        softmaxRowBackward(log, y.data() + i * cols, dy.data() + i * cols, cols,
                           dxBody.data() + i * cols);
      }
      expectSameBits(y, yBody, "forward");
      expectSameBits(dx, dxBody, "backward");
    }
  }
}

// The CUDA embedding gradient: a thread per table column.
TEST(KernelElementsTest, EmbeddingGradientMatchesTheCpuKernelBitForBit) {
  kernels::EmbeddingShape s{7, 5, 6};
  std::vector<int32_t> indices = {4, 1, 4, 0, 4, 1, 2};
  std::vector<float> dy = randomVector(s.count * s.dim, 18);
  std::vector<float> dTable(s.rows * s.dim), body(s.rows * s.dim, 0.f);
  kernels::embeddingBackward(s, indices.data(), dy.data(), dTable.data());
  for (int64_t d = 0; d < s.dim; ++d)
    embeddingGradColumn(indices.data(), s.count, s.dim, d, dy.data(),
                        body.data());
  expectSameBits(dTable, body, "dtable");
}

// The CUDA layer norm: a thread per row, then a thread per column.
TEST(KernelElementsTest, LayerNormMatchesTheCpuKernelBitForBit) {
  LayerNormShape s{5, 12, 1e-5};
  std::vector<float> x = randomVector(s.rows * s.cols, 14, -3.f, 3.f);
  std::vector<float> dy = randomVector(x.size(), 15);
  std::vector<float> scale = randomVector(s.cols, 16, 0.5f, 1.5f);
  std::vector<float> bias = randomVector(s.cols, 17);
  std::vector<float> y(x.size()), dx(x.size()), dScale(s.cols), dBias(s.cols);
  std::vector<RowStats> stats(s.rows);
  kernels::layerNormForward(s, x.data(), scale.data(), bias.data(), y.data());
  kernels::layerNormBackward(s, x.data(), dy.data(), scale.data(), stats.data(),
                             dx.data(), dScale.data(), dBias.data());
  std::vector<float> yBody(x.size()), dxBody(x.size()), dScaleBody(s.cols),
      dBiasBody(s.cols);
  std::vector<RowStats> statsBody(s.rows);
  for (int64_t r = 0; r < s.rows; ++r) {
    const float *row = x.data() + r * s.cols;
    statsBody[r] = layerNormStats(row, s.cols, s.epsilon);
    for (int64_t c = 0; c < s.cols; ++c)
      yBody[r * s.cols + c] =
          layerNormForward(row[c], statsBody[r], scale[c], bias[c]);
    layerNormBackwardRow(row, dy.data() + r * s.cols, scale.data(), s.cols,
                         statsBody[r], dxBody.data() + r * s.cols);
  }
  for (int64_t c = 0; c < s.cols; ++c)
    layerNormParamGrads(x.data(), dy.data(), statsBody.data(), s.rows, s.cols,
                        c, dScaleBody.data(), dBiasBody.data());
  expectSameBits(y, yBody, "y");
  expectSameBits(dx, dxBody, "dx");
  expectSameBits(dScale, dScaleBody, "dscale");
  expectSameBits(dBias, dBiasBody, "dbias");
}

// The CUDA transpose copies x[permuteSource(o)] to y[o]: the element a
// naive nested loop over the output's coordinates reads.
TEST(KernelElementsTest, PermuteIndexMatchesANaiveTranspose) {
  const int64_t dims[] = {2, 3, 4, 5, 6};
  for (std::vector<int64_t> perm : {std::vector<int64_t>{0, 2, 1},
                                    {2, 0, 1},
                                    {0, 2, 3, 1},
                                    {0, 2, 1, 3, 4},
                                    {4, 3, 2, 1, 0}}) {
    int rank = static_cast<int>(perm.size());
    PermuteIndex index = makePermuteIndex(rank, dims, perm.data());
    int64_t inStrides[5], stride = 1, size = 1;
    for (int d = rank - 1; d >= 0; --d) {
      inStrides[d] = stride;
      stride *= dims[d];
    }
    for (int d = 0; d < rank; ++d)
      size *= dims[d];
    for (int64_t o = 0; o < size; ++o) {
      // Output coordinates, row-major over the permuted dims.
      int64_t rest = o, source = 0;
      for (int i = rank - 1; i >= 0; --i) {
        int64_t extent = dims[perm[i]];
        source += (rest % extent) * inStrides[perm[i]];
        rest /= extent;
      }
      ASSERT_EQ(permuteSource(index, o), source) << "output " << o;
    }
  }
}

} // namespace
} // namespace dpc::kernels::elements
