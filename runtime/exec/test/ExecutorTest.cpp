//===- ExecutorTest.cpp - running hand-built plans ------------------------===//
//
// A train step of a small MLP through the executor must equal the same
// kernels called directly, at the compiled batch and at a smaller one; the
// plan's optimizer state and step count must behave like PyTorch's.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/test/TrainingRuns.h"
#include "runtime/kernels/Kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace dpc::rt {
namespace {

using plan::test::Batch;
using plan::test::MlpPlanOptions;
using plan::test::randomBatch;
using plan::test::smallMlp;

std::shared_ptr<const plan::LoadedPlan> load(const MlpPlanOptions &o) {
  return plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(o), "test.plan");
}

std::vector<float> readParam(const Executor &executor, size_t index) {
  std::vector<float> values(executor.getPersistentBytes(index) / 4);
  executor.readPersistent(index, values.data());
  return values;
}

/// Runs one train step of `executor` on `batch`.
void trainStep(Executor &executor, const Batch &batch, float lr) {
  int step = executor.findStep(plan::StepRole::Train);
  test::bindBatch(executor, step, batch, lr);
  executor.run(step, static_cast<int64_t>(batch.labels.size()));
}

/// The MLP's train step with the kernels called directly: updates
/// params = {w1, b1, w2, b2} (SGD without momentum) and returns the loss.
float referenceStep(const MlpPlanOptions &o, std::vector<std::vector<float>> &p,
                    const Batch &batch, float lr) {
  kernels::KernelContext ctx;
  int64_t n = batch.labels.size();
  int64_t in = o.channels * o.height * o.width, h = o.hidden, c = o.classes;
  std::vector<float> hid(n * h), act(n * h), logits(n * c), dlogits(n * c),
      da(n * h), dh(n * h), dw1(h * in), db1(h), dw2(c * h), db2(c);
  kernels::LinearShape l1{n, in, h}, l2{n, h, c};
  kernels::linearForward(ctx, l1, batch.images.data(), p[0].data(), p[1].data(),
                         hid.data());
  kernels::reluForward(n * h, hid.data(), act.data());
  kernels::linearForward(ctx, l2, act.data(), p[2].data(), p[3].data(),
                         logits.data());
  float loss, one = 1.f;
  kernels::crossEntropyForward(n, c, logits.data(), batch.labels.data(),
                               float(n), &loss, nullptr);
  kernels::crossEntropyBackward(n, c, logits.data(), batch.labels.data(), &one,
                                float(n), dlogits.data());
  kernels::linearBackwardWeights(ctx, l2, act.data(), dlogits.data(),
                                 dw2.data(), db2.data());
  kernels::linearBackwardData(ctx, l2, dlogits.data(), p[2].data(), da.data());
  kernels::reluBackward(n * h, act.data(), da.data(), dh.data());
  kernels::linearBackwardWeights(ctx, l1, batch.images.data(), dh.data(),
                                 dw1.data(), db1.data());
  std::vector<float> *grads[] = {&dw1, &db1, &dw2, &db2};
  for (size_t i = 0; i < 4; ++i)
    kernels::sgdUpdate(p[i].size(), {}, lr, 1, p[i].data(), grads[i]->data(),
                       nullptr);
  return loss;
}

/// The mean cross-entropy of `logits` in double, by hand.
double meanCrossEntropy(const std::vector<float> &logits,
                        const std::vector<int32_t> &labels, int64_t classes) {
  double sum = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const float *row = &logits[i * classes];
    double max = *std::max_element(row, row + classes), z = 0;
    for (int64_t j = 0; j < classes; ++j)
      z += std::exp(row[j] - max);
    sum += max + std::log(z) - row[labels[i]];
  }
  return sum / labels.size();
}

void expectTrainStepMatchesReference(int64_t rows) {
  MlpPlanOptions o = smallMlp();
  Executor executor(load(o));
  std::vector<std::vector<float>> params;
  for (size_t i = 0; i < 4; ++i)
    params.push_back(readParam(executor, i));
  Batch batch = randomBatch(o, rows, 7);

  float expectedLoss = referenceStep(o, params, batch, 0.1f);
  trainStep(executor, batch, 0.1f);
  int step = executor.findStep(plan::StepRole::Train);
  EXPECT_EQ(executor.getScalarOutput(step, "loss"), expectedLoss);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(readParam(executor, i), params[i]) << "parameter " << i;
  EXPECT_EQ(executor.getOptimizerStep(), 1);

  // The loss is the mean over the actual rows, checked by hand.
  std::vector<float> logits(executor.getOutputBytes(step, "logits") / 4);
  ASSERT_EQ(logits.size(), size_t(rows * o.classes));
  executor.getOutput(step, "logits", logits.data(), logits.size() * 4);
  EXPECT_NEAR(executor.getScalarOutput(step, "loss"),
              meanCrossEntropy(logits, batch.labels, o.classes), 1e-5);
}

TEST(ExecutorTest, TrainStepEqualsKernelsCalledDirectly) {
  expectTrainStepMatchesReference(8);
}

TEST(ExecutorTest, ShortBatchGivesTheExactMeanAndUpdate) {
  expectTrainStepMatchesReference(5);
  expectTrainStepMatchesReference(1);
}

TEST(ExecutorTest, EvalStepCountsCorrectPredictionsInTheResultDtype) {
  for (plan::DType dtype : {plan::DType::I64, plan::DType::F32}) {
    MlpPlanOptions o = smallMlp();
    o.correctDtype = dtype;
    Executor executor(load(o));
    int eval = executor.findStep(plan::StepRole::Eval);
    Batch batch = randomBatch(o, 6, 3);
    executor.setInput(eval, "images", batch.images.data(),
                      batch.images.size() * 4);
    executor.setInput(eval, "labels", batch.labels.data(),
                      batch.labels.size() * 4);
    executor.run(eval, 6);
    std::vector<float> logits(6 * o.classes);
    executor.getOutput(eval, "logits", logits.data(), logits.size() * 4);
    int64_t expected = 0;
    for (int64_t i = 0; i < 6; ++i) {
      const float *row = &logits[i * o.classes];
      expected +=
          std::max_element(row, row + o.classes) - row == batch.labels[i];
    }
    EXPECT_EQ(executor.getScalarOutput(eval, "correct"), double(expected));
    EXPECT_EQ(executor.getOptimizerStep(), 0) << "eval updates nothing";
  }
}

TEST(ExecutorTest, TwoStreamsGiveTheSameParametersAsOne) {
  MlpPlanOptions o = smallMlp();
  o.momentum = 0.9;
  Executor one(load(o));
  o.twoStreams = true;
  Executor two(load(o));
  for (uint32_t i = 0; i < 5; ++i) {
    Batch batch = randomBatch(o, 8, 100 + i);
    trainStep(one, batch, 0.05f);
    trainStep(two, batch, 0.05f);
  }
  ASSERT_EQ(one.getNumPersistent(), two.getNumPersistent());
  for (size_t i = 0; i < one.getNumPersistent(); ++i)
    EXPECT_EQ(readParam(one, i), readParam(two, i)) << "persistent " << i;
}

TEST(ExecutorTest, AdamWStepCountComesFromTheExecutor) {
  MlpPlanOptions o = smallMlp();
  o.optimizer = "adamw";
  o.weightDecay = 0.01;
  Executor executor(load(o));
  // b2 (index 3) against adamwUpdate by hand with steps 1 and 2.
  std::vector<float> b2 = readParam(executor, 3), m(b2.size()), v(b2.size());
  for (int64_t t = 1; t <= 2; ++t) {
    Batch batch = randomBatch(o, 8, 50 + uint32_t(t));
    // db2 = column sums of dlogits: recompute from the executor's logits
    // after the step is not possible, so run the eval forward first.
    int eval = executor.findStep(plan::StepRole::Eval);
    executor.setInput(eval, "images", batch.images.data(),
                      batch.images.size() * 4);
    executor.setInput(eval, "labels", batch.labels.data(),
                      batch.labels.size() * 4);
    executor.run(eval, 8);
    std::vector<float> logits(8 * o.classes), dlogits(logits.size());
    executor.getOutput(eval, "logits", logits.data(), logits.size() * 4);
    float one = 1.f;
    kernels::crossEntropyBackward(8, o.classes, logits.data(),
                                  batch.labels.data(), &one, 8.f,
                                  dlogits.data());
    std::vector<float> db2(o.classes, 0.f);
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < o.classes; ++j)
        db2[j] += dlogits[i * o.classes + j];
    kernels::AdamWParams params;
    params.weightDecay = 0.01;
    kernels::adamwUpdate(b2.size(), params, 0.01, t, b2.data(), db2.data(),
                         m.data(), v.data());
    trainStep(executor, batch, 0.01f);
    EXPECT_EQ(executor.getOptimizerStep(), t);
    std::vector<float> actual = readParam(executor, 3);
    for (size_t j = 0; j < b2.size(); ++j)
      EXPECT_NEAR(actual[j], b2[j], 1e-6) << "step " << t << " element " << j;
  }
}

TEST(ExecutorTest, RejectsABatchAboveTheCompiledOne) {
  Executor executor(load(smallMlp()));
  EXPECT_THROW(executor.run(executor.findStep(plan::StepRole::Eval), 9),
               std::invalid_argument);
  EXPECT_THROW(executor.setInput(0, "nope", nullptr, 0), std::invalid_argument);
}

TEST(ExecutorTest, LabelsOutsideTheClassesAreRefusedNotRun) {
  MlpPlanOptions o = smallMlp();
  Executor executor(load(o));
  Batch batch = randomBatch(o, 8, 1);
  batch.labels[3] = 7; // outside the 3 classes
  try {
    trainStep(executor, batch, 0.1f);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument &error) {
    EXPECT_STREQ(error.what(), "step 'train_step': input 'labels' row 3 "
                               "holds label 7, outside the 3 classes");
  }
  // The executor stays usable.
  batch.labels[3] = 1;
  trainStep(executor, batch, 0.1f);
}

TEST(ExecutorTest, UnsupportedDeviceIsAPlanError) {
  plan::PlanT object = plan::test::buildMlpPlanObject(smallMlp());
  // No machine has a 100th GPU: with or without the CUDA backend, and
  // with or without GPUs, the plan fails in one line that says why and
  // what to do instead.
  object.devices[0]->name = "cuda:99";
  auto loaded =
      plan::LoadedPlan::fromBytes(plan::test::packPlan(object), "gpu.plan");
  try {
    Executor executor(loaded);
    FAIL() << "expected an error";
  } catch (const plan::PlanError &error) {
    std::string line = error.what();
    EXPECT_EQ(line.rfind("gpu.plan: device 'cuda:99' is not available: ", 0),
              0u)
        << line;
    std::string advice = "; compile for --devices cpu:0[,cpu:1,...]";
    ASSERT_GT(line.size(), advice.size()) << line;
    EXPECT_EQ(line.substr(line.size() - advice.size()), advice) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
}

TEST(ExecutorTest, TheCpuRefusesTf32Calls) {
  // --precision tf32 is for GPUs (dpc compile refuses it for a CPU device):
  // a plan whose linear layer computes in TF32 anyway fails in its step, in
  // one line naming the kernel, rather than computing in f32 unnoticed.
  plan::PlanT object = plan::test::buildMlpPlanObject(smallMlp());
  int marked = 0;
  for (auto &step : object.steps)
    for (auto &stream : step->streams)
      for (auto &instruction : stream->instructions)
        if (instruction->kernel == plan::Kernel::LinearForward) {
          instruction->precision = plan::DType::TF32;
          ++marked;
        }
  ASSERT_GT(marked, 0);
  Executor executor(
      plan::LoadedPlan::fromBytes(plan::test::packPlan(object), "tf32.plan"));
  try {
    trainStep(executor, randomBatch(smallMlp(), 8, 3), 0.1f);
    FAIL() << "expected an error";
  } catch (const std::runtime_error &error) {
    EXPECT_STREQ(error.what(),
                 "step 'train_step': LinearForward: the CPU does not compute "
                 "in TF32 (a plan compiled with --precision tf32 for a GPU)");
  }
}

} // namespace
} // namespace dpc::rt
