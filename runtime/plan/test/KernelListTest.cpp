//===- KernelListTest.cpp - the one kernel list and what it generates -----===//
//
// Kernels.def is the single description of every kernel: these tests check
// what the signature table, the role enums and the shared dispatch take
// from it, and that the CPU backend's table has an entry for each kernel
// (the CUDA backend's is checked in CudaBackendTest, built with CUDA).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelDispatch.h"
#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/kernels/KernelElements.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace dpc::plan {
namespace {

TEST(KernelListTest, EveryKernelOfTheSchemaIsListedUnderItsName) {
  for (size_t k = 0; k < kNumKernels; ++k) {
    auto kernel = static_cast<Kernel>(k);
    const KernelSignature *signature = getKernelSignature(kernel);
    ASSERT_NE(signature, nullptr) << EnumNameKernel(kernel);
    EXPECT_STREQ(signature->name, EnumNameKernel(kernel));
    const Kernel *found = findKernel(EnumNameKernel(kernel));
    ASSERT_NE(found, nullptr) << EnumNameKernel(kernel);
    EXPECT_EQ(*found, kernel);
    // Every role has a name, distinct from the others of its list.
    for (size_t i = 0; i < signature->maxOperands && i < 16; ++i)
      EXPECT_FALSE(signature->getOperandRole(i).empty())
          << signature->name << " operand " << i;
    for (size_t i = 0; i < signature->maxResults; ++i)
      EXPECT_FALSE(signature->getResultRole(i).empty())
          << signature->name << " result " << i;
  }
  EXPECT_EQ(getKernelSignature(static_cast<Kernel>(kNumKernels)), nullptr);
  EXPECT_EQ(findKernel("Conv3dForward"), nullptr);
}

TEST(KernelListTest, OptionalRolesMayBeLeftOffOnlyAtTheEnd) {
  const KernelSignature &conv = *getKernelSignature(Kernel::Conv2dForward);
  EXPECT_EQ(conv.minOperands, 2);
  EXPECT_EQ(conv.maxOperands, 3);
  EXPECT_TRUE(conv.isOptionalOperand(roles::Conv2dForward::Bias));
  EXPECT_FALSE(conv.isOptionalOperand(roles::Conv2dForward::W));
  EXPECT_TRUE(conv.takesWorkspace());
  EXPECT_EQ(conv.attrs, KernelAttrs::Conv2dAttrs);
  EXPECT_FALSE(conv.attrsRequired());

  // The running statistics: both optional, so the call may stop at Shift.
  const KernelSignature &bn =
      *getKernelSignature(Kernel::BatchNormTrainingForward);
  EXPECT_EQ(bn.minOperands, 3);
  EXPECT_EQ(bn.maxOperands, 5);
  EXPECT_TRUE(
      bn.isOptionalOperand(roles::BatchNormTrainingForward::RunningMean));
  EXPECT_FALSE(bn.isOptionalResult(roles::BatchNormTrainingForward::SavedMean));

  // An optional role in the middle: -1, never left off.
  const KernelSignature &matmul = *getKernelSignature(Kernel::MatmulBackward);
  EXPECT_EQ(matmul.minResults, 0);
  EXPECT_TRUE(matmul.isOptionalResult(roles::MatmulBackward::DA));

  const KernelSignature &pool = *getKernelSignature(Kernel::MaxPool2dForward);
  EXPECT_TRUE(pool.attrsRequired());
  EXPECT_FALSE(pool.takesWorkspace());
}

TEST(KernelListTest, RolesNameOperandsInErrors) {
  EXPECT_EQ(describeOperand(Kernel::LinearForward, 2), "operand 2 (Bias)");
  EXPECT_EQ(describeResult(Kernel::BatchNormBackward, 1), "result 1 (DScale)");
  EXPECT_EQ(describeOperand(Kernel::ReluForward, 3), "operand 3");
  // A variadic kernel's operands all take its one role.
  const KernelSignature &allReduce = *getKernelSignature(Kernel::AllReduce);
  EXPECT_EQ(allReduce.maxOperands, 255);
  EXPECT_EQ(allReduce.getOperandRole(7), "X");
  EXPECT_EQ(
      getKernelSignature(Kernel::CrossEntropyBackward)->findOperand("Labels"),
      static_cast<int>(roles::CrossEntropyBackward::Labels));
  EXPECT_EQ(getKernelSignature(Kernel::ReluForward)->findOperand("Labels"), -1);
}

TEST(KernelListTest, FlagsDecideTheSharedDispatch) {
  EXPECT_TRUE(isOptimizerKernel(Kernel::SgdUpdate));
  EXPECT_TRUE(isOptimizerKernel(Kernel::AdamWUpdate));
  EXPECT_FALSE(isOptimizerKernel(Kernel::Accumulate));
  EXPECT_TRUE(getKernelSignature(Kernel::AllReduce)->has(kCollective));
  for (Kernel kernel :
       {Kernel::BatchNormStatistics, Kernel::BatchNormApply,
        Kernel::BatchNormGradStatistics, Kernel::BatchNormGradApply})
    EXPECT_TRUE(getKernelSignature(kernel)->has(kRunsOnEmpty));
}

TEST(KernelTableTest, TheCpuBackendHasEveryKernel) {
  const KernelTable<kernels::KernelContext> &table = rt::getCpuKernelTable();
  for (size_t k = 0; k < kNumKernels; ++k)
    EXPECT_NE(table.kernels[k], nullptr)
        << EnumNameKernel(static_cast<Kernel>(k));
  EXPECT_NE(table.zeroResults, nullptr);
}

/// A present f32 tensor over host memory.
TensorArg tensor(std::vector<float> &data, std::vector<int64_t> dims) {
  return {true, data.data(), DType::F32, std::move(dims)};
}

TEST(KernelTableTest, TheDispatchZeroesAnEmptyShareAndChecksTheStep) {
  kernels::KernelContext context;
  // A replica on 0 rows: the weight gradient is a sum over no rows, zeros,
  // and no kernel runs (oneDNN rejects zero dims).
  std::vector<float> x, dy, dw(6, 7.f), db(2, 7.f);
  KernelCall weights;
  weights.kernel = Kernel::LinearBackwardWeights;
  weights.operands = {tensor(x, {0, 3}), tensor(dy, {0, 2})};
  weights.results = {tensor(dw, {2, 3}), tensor(db, {2})};
  rt::runCpuKernel(context, weights);
  EXPECT_EQ(dw, std::vector<float>(6, 0.f));
  EXPECT_EQ(db, std::vector<float>(2, 0.f));

  // An optimizer kernel needs a 1-based update count, on every backend.
  std::vector<float> param(2, 1.f), grad(2, 1.f), lr(1, 0.1f);
  KernelCall sgd;
  sgd.kernel = Kernel::SgdUpdate;
  sgd.operands = {tensor(param, {2}), tensor(grad, {2}), tensor(lr, {})};
  sgd.optimizerStep = 0;
  try {
    rt::runCpuKernel(context, sgd);
    FAIL() << "expected an error";
  } catch (const std::runtime_error &error) {
    EXPECT_STREQ(error.what(), "SgdUpdate: step 0 is not a 1-based update "
                               "count");
  }
  EXPECT_EQ(param, std::vector<float>(2, 1.f));
  sgd.optimizerStep = 1;
  rt::runCpuKernel(context, sgd);
  EXPECT_FLOAT_EQ(param[0], 0.9f);

  KernelCall unknown;
  unknown.kernel = static_cast<Kernel>(999);
  try {
    rt::runCpuKernel(context, unknown);
    FAIL() << "expected an error";
  } catch (const std::runtime_error &error) {
    EXPECT_STREQ(error.what(),
                 "kernel 999 (unknown) is not supported on the CPU");
  }
}

/// Concat then Split along dim 1 of [2, *, 3] parts: each row of the
/// whole holds the parts' rows in order, and Split gives them back.
TEST(KernelTableTest, ConcatAndSplitMoveRowsOfParts) {
  kernels::KernelContext context;
  std::vector<float> a(2 * 1 * 3), b(2 * 2 * 3), whole(2 * 3 * 3);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<float>(i);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = 100.f + static_cast<float>(i);
  InstructionT instruction;
  ConcatAttrsT axis;
  axis.axis = 1;
  instruction.attrs.Set(axis);
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(Instruction::Pack(builder, &instruction));
  const auto *attrs =
      flatbuffers::GetRoot<Instruction>(builder.GetBufferPointer());

  KernelCall concat;
  concat.kernel = Kernel::ConcatForward;
  concat.instruction = attrs;
  concat.operands = {tensor(a, {2, 1, 3}), tensor(b, {2, 2, 3})};
  concat.results = {tensor(whole, {2, 3, 3})};
  rt::runCpuKernel(context, concat);
  // Row r of the whole: a's row r, then b's two rows r.
  std::vector<float> expected;
  for (int r = 0; r < 2; ++r) {
    expected.insert(expected.end(), a.begin() + r * 3, a.begin() + r * 3 + 3);
    expected.insert(expected.end(), b.begin() + r * 6, b.begin() + r * 6 + 6);
  }
  EXPECT_EQ(whole, expected);

  std::vector<float> a2(a.size()), b2(b.size());
  KernelCall split;
  split.kernel = Kernel::SplitForward;
  split.instruction = attrs;
  split.operands = {tensor(whole, {2, 3, 3})};
  split.results = {tensor(a2, {2, 1, 3}), tensor(b2, {2, 2, 3})};
  rt::runCpuKernel(context, split);
  EXPECT_EQ(a2, a);
  EXPECT_EQ(b2, b);

  // Parts that do not add up are refused before anything is copied.
  split.results = {tensor(a2, {2, 1, 3}), tensor(a2, {2, 1, 3})};
  EXPECT_THROW(rt::runCpuKernel(context, split), std::runtime_error);
}

/// The instruction `attrs` (a Plan.fbs attribute table) make, packed.
template <typename AttrsT>
flatbuffers::DetachedBuffer packInstruction(AttrsT attrs) {
  InstructionT instruction;
  instruction.attrs.Set(std::move(attrs));
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(Instruction::Pack(builder, &instruction));
  return builder.Release();
}

std::vector<float> wavyVector(size_t size, float phase) {
  std::vector<float> v(size);
  for (size_t i = 0; i < size; ++i)
    v[i] = std::sin(static_cast<float>(i) * 0.7f + phase);
  return v;
}

void expectClose(const std::vector<float> &fused,
                 const std::vector<float> &unfused, const char *what) {
  ASSERT_EQ(fused.size(), unfused.size()) << what;
  for (size_t i = 0; i < fused.size(); ++i)
    EXPECT_NEAR(fused[i], unfused[i], 1e-5f * (1.f + std::fabs(unfused[i])))
        << what << " element " << i;
}

/// codegen's fuse-exec-kernels folds a bias gradient (ReduceSum of DY) into
/// the weight gradient before it: the fused call must give what the two
/// unfused calls give.
TEST(KernelTableTest, BiasGradientFusionsMatchTheUnfusedCalls) {
  kernels::KernelContext context;
  auto sumAttrs = [](std::vector<int64_t> dims) {
    ReduceAttrsT attrs;
    attrs.dims = std::move(dims);
    return packInstruction(attrs);
  };

  // Linear: MatmulTransposedA(DY, X) + ReduceSum(DY, rows) against
  // LinearBackwardWeights(X, DY) -> (DW, DB).
  std::vector<float> x = wavyVector(7 * 5, 0.f), dy = wavyVector(7 * 3, 1.f);
  std::vector<float> dw(3 * 5), db(3), fusedDw(3 * 5), fusedDb(3);
  auto rows = sumAttrs({0});
  KernelCall weights, sum, fused;
  weights.kernel = Kernel::MatmulTransposedA;
  weights.operands = {tensor(dy, {7, 3}), tensor(x, {7, 5})};
  weights.results = {tensor(dw, {3, 5})};
  sum.kernel = Kernel::ReduceSum;
  sum.instruction = flatbuffers::GetRoot<Instruction>(rows.data());
  sum.operands = {tensor(dy, {7, 3})};
  sum.results = {tensor(db, {3})};
  fused.kernel = Kernel::LinearBackwardWeights;
  fused.operands = {tensor(x, {7, 5}), tensor(dy, {7, 3})};
  fused.results = {tensor(fusedDw, {3, 5}), tensor(fusedDb, {3})};
  for (KernelCall *call : {&weights, &sum, &fused})
    rt::runCpuKernel(context, *call);
  expectClose(fusedDw, dw, "linear dw");
  expectClose(fusedDb, db, "linear db");

  // Convolution: Conv2dBackwardWeights + ReduceSum(DY, all but channels)
  // against Conv2dBackwardWeights -> (DW, DB).
  std::vector<float> cx = wavyVector(2 * 2 * 5 * 5, 2.f);
  std::vector<float> cdy = wavyVector(2 * 4 * 3 * 3, 3.f);
  std::vector<float> cdw(4 * 2 * 3 * 3), cdb(4), fusedCdw(cdw.size()),
      fusedCdb(4);
  Conv2dAttrsT convAttrs;
  convAttrs.stride = {1, 1};
  convAttrs.padding = {0, 0, 0, 0};
  convAttrs.dilation = {1, 1};
  auto conv = packInstruction(convAttrs);
  auto channels = sumAttrs({0, 2, 3});
  KernelCall convWeights, convSum, convFused;
  convWeights.kernel = convFused.kernel = Kernel::Conv2dBackwardWeights;
  convWeights.instruction = convFused.instruction =
      flatbuffers::GetRoot<Instruction>(conv.data());
  convWeights.operands = convFused.operands = {tensor(cx, {2, 2, 5, 5}),
                                               tensor(cdy, {2, 4, 3, 3})};
  convWeights.results = {tensor(cdw, {4, 2, 3, 3})};
  convFused.results = {tensor(fusedCdw, {4, 2, 3, 3}), tensor(fusedCdb, {4})};
  convSum.kernel = Kernel::ReduceSum;
  convSum.instruction = flatbuffers::GetRoot<Instruction>(channels.data());
  convSum.operands = {tensor(cdy, {2, 4, 3, 3})};
  convSum.results = {tensor(cdb, {4})};
  for (KernelCall *call : {&convWeights, &convSum, &convFused})
    rt::runCpuKernel(context, *call);
  expectClose(fusedCdw, cdw, "conv dw");
  expectClose(fusedCdb, cdb, "conv db");
}

/// fuse-exec-kernels folds CorrectCount into the loss before it: the loss
/// kernel's Correct result must count what CorrectCount counts.
TEST(KernelTableTest, LossCountsTheRowsCorrectCountCounts) {
  kernels::KernelContext context;
  std::vector<float> logits = wavyVector(9 * 4, 0.5f);
  // Every other row labelled with its argmax: 5 of 9 correct.
  std::vector<int32_t> labels(9);
  for (int32_t i = 0; i < 9; ++i) {
    const float *row = logits.data() + i * 4;
    int32_t best = static_cast<int32_t>(std::max_element(row, row + 4) - row);
    labels[i] = i % 2 ? (best + 1) % 4 : best;
  }
  std::vector<float> loss(1), fusedLoss(1);
  int64_t count = -1, fusedCount = -1;
  TensorArg labelArg{true, labels.data(), DType::I32, {9}};
  TensorArg countArg{true, &count, DType::I64, {}};
  TensorArg fusedCountArg{true, &fusedCount, DType::I64, {}};
  KernelCall unfused, counting, fused;
  unfused.kernel = fused.kernel = Kernel::CrossEntropyForward;
  unfused.batch = fused.batch = 9;
  unfused.operands = fused.operands =
      counting.operands = {tensor(logits, {9, 4}), labelArg};
  unfused.results = {tensor(loss, {})};
  counting.kernel = Kernel::CorrectCount;
  counting.results = {countArg};
  fused.results = {tensor(fusedLoss, {}), fusedCountArg};
  for (KernelCall *call : {&unfused, &counting, &fused})
    rt::runCpuKernel(context, *call);
  EXPECT_EQ(fusedLoss, loss);
  EXPECT_EQ(fusedCount, count);
  EXPECT_EQ(count, 5);
}

/// fuse-exec-kernels makes the loss, its count and its gradient one
/// CrossEntropyForwardBackward: the same bits as the three calls, with the
/// seed gradient given or left to its default of 1.
TEST(KernelTableTest, LossAndGradientInOneCallMatchTheUnfusedCalls) {
  kernels::KernelContext context;
  std::vector<float> logits = wavyVector(9 * 4, 1.5f);
  std::vector<int32_t> labels = {0, 1, 2, 3, 0, 1, 2, 3, 1};
  TensorArg labelArg{true, labels.data(), DType::I32, {9}};
  for (float seed : {1.f, 0.25f}) {
    std::vector<float> loss(1), fusedLoss(1), dLoss(1, seed);
    std::vector<float> dLogits(9 * 4), fusedDLogits(9 * 4);
    int64_t count = -1, fusedCount = -1;
    KernelCall forward, counting, backward, fused;
    forward.kernel = Kernel::CrossEntropyForward;
    counting.kernel = Kernel::CorrectCount;
    backward.kernel = Kernel::CrossEntropyBackward;
    fused.kernel = Kernel::CrossEntropyForwardBackward;
    for (KernelCall *call : {&forward, &counting, &backward, &fused}) {
      call->batch = 12; // a replica's 9 rows of a global batch of 12
      call->operands = {tensor(logits, {9, 4}), labelArg};
    }
    forward.results = {tensor(loss, {})};
    counting.results = {TensorArg{true, &count, DType::I64, {}}};
    backward.results = {tensor(dLogits, {9, 4})};
    fused.results = {tensor(fusedLoss, {}), tensor(fusedDLogits, {9, 4}),
                     TensorArg{true, &fusedCount, DType::I64, {}}};
    if (seed != 1.f) {
      backward.operands.push_back(tensor(dLoss, {}));
      fused.operands.push_back(tensor(dLoss, {}));
    }
    for (KernelCall *call : {&forward, &counting, &backward, &fused})
      rt::runCpuKernel(context, *call);
    EXPECT_EQ(fusedLoss, loss);
    EXPECT_EQ(fusedCount, count);
    EXPECT_EQ(std::memcmp(fusedDLogits.data(), dLogits.data(),
                          dLogits.size() * sizeof(float)),
              0)
        << "seed " << seed;
  }
}

/// ReduceSum on the CPU sums leading dims away a row at a time; each
/// output must still be the CUDA element body's sum, in its order, bit for
/// bit -- over more outputs than one chunk, and over other dims too.
TEST(KernelTableTest, ReduceSumMatchesTheElementBodyBitForBit) {
  kernels::KernelContext context;
  for (auto [dims, reduced] :
       {std::pair(std::vector<int64_t>{37, 1030}, std::vector<int64_t>{0}),
        std::pair(std::vector<int64_t>{5, 3, 7}, std::vector<int64_t>{0, 1}),
        std::pair(std::vector<int64_t>{6, 4, 3, 5},
                  std::vector<int64_t>{0, 2, 3})}) {
    std::vector<float> x(getNumElements(dims));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = std::sin(static_cast<float>(i)) * 1e3f + 1e-3f;
    InstructionT instruction;
    ReduceAttrsT attrs;
    attrs.dims = reduced;
    instruction.attrs.Set(attrs);
    flatbuffers::FlatBufferBuilder builder;
    builder.Finish(Instruction::Pack(builder, &instruction));
    KernelCall sum;
    sum.kernel = Kernel::ReduceSum;
    sum.instruction =
        flatbuffers::GetRoot<Instruction>(builder.GetBufferPointer());
    bool isReduced[8] = {};
    std::vector<int64_t> keptDims;
    for (int64_t d : reduced)
      isReduced[d] = true;
    for (size_t d = 0; d < dims.size(); ++d)
      if (!isReduced[d])
        keptDims.push_back(dims[d]);
    std::vector<float> y(getNumElements(keptDims));
    sum.operands = {tensor(x, dims)};
    sum.results = {tensor(y, keptDims)};
    rt::runCpuKernel(context, sum);
    kernels::elements::ReduceIndex index = kernels::elements::makeReduceIndex(
        static_cast<int>(dims.size()), dims.data(), isReduced);
    for (size_t o = 0; o < y.size(); ++o) {
      float body = kernels::elements::reduceSum(index, o, x.data());
      EXPECT_EQ(std::memcmp(&y[o], &body, sizeof(float)), 0)
          << "output " << o << ": " << y[o] << " vs " << body;
    }
  }
}

} // namespace
} // namespace dpc::plan
