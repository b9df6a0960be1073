//===- DataParallelTest.cpp - one step's replicas on several devices ------===//
//
// An MLP plan on N CPU devices (per-device state and steps, gradients
// all-reduced on a communication stream) must train like the one-device
// plan with the same global batch, whatever the split, including ragged
// batches where a device gets no rows; its replicas must stay bitwise
// identical; and the executor must report global outputs.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/exec/BatchSplit.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/test/TestPlans.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <omp.h>
#include <random>

namespace dpc::rt {
namespace {

using plan::test::Batch;
using plan::test::MlpPlanOptions;
using plan::test::randomBatch;
using Rows = std::vector<int64_t>;

TEST(BatchSplitTest, EqualSharesFollowTorchChunk) {
  EXPECT_EQ(splitBatch({8, 8, 8, 8}, 30), (Rows{8, 8, 8, 6}));
  EXPECT_EQ(splitBatch({3, 3, 3, 3}, 10), (Rows{3, 3, 3, 1}));
  EXPECT_EQ(splitBatch({4, 4, 4, 4}, 5), (Rows{2, 2, 1, 0}));
  EXPECT_EQ(splitBatch({4, 4}, 5), (Rows{3, 2}));
  EXPECT_EQ(splitBatch({4, 4}, 1), (Rows{1, 0}));
  EXPECT_EQ(splitBatch({8}, 5), (Rows{5}));
}

TEST(BatchSplitTest, UnequalSharesAreProportionalWithinEachShare) {
  EXPECT_EQ(splitBatch({3, 5}, 8), (Rows{3, 5}));
  EXPECT_EQ(splitBatch({3, 5}, 5), (Rows{2, 3}));
  EXPECT_EQ(splitBatch({3, 5}, 1), (Rows{0, 1}));
  EXPECT_EQ(splitBatch({2, 3, 4}, 5), (Rows{1, 2, 2}));
  std::mt19937 random(1);
  for (int trial = 0; trial < 500; ++trial) {
    Rows shares(1 + random() % 5);
    for (int64_t &s : shares)
      s = random() % 9;
    int64_t total = std::accumulate(shares.begin(), shares.end(), int64_t(0));
    int64_t batch = total ? random() % (total + 1) : 0;
    Rows rows = splitBatch(shares, batch);
    EXPECT_EQ(std::accumulate(rows.begin(), rows.end(), int64_t(0)), batch);
    for (size_t d = 0; d < shares.size(); ++d)
      EXPECT_LE(rows[d], shares[d]);
  }
  EXPECT_THROW(splitBatch({4, 4}, 9), std::invalid_argument);
}

MlpPlanOptions smallMlp(Rows split = {}) {
  return plan::test::smallMlp(std::move(split), /*momentum=*/0.9);
}

std::unique_ptr<Executor> makeExecutor(const MlpPlanOptions &o) {
  return std::make_unique<Executor>(
      plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(o), "dp.plan"));
}

void bind(Executor &executor, int step, const Batch &batch) {
  executor.setInput(step, "images", batch.images.data(),
                    batch.images.size() * 4);
  executor.setInput(step, "labels", batch.labels.data(),
                    batch.labels.size() * 4);
}

/// One train step; returns the global loss.
double trainStep(Executor &executor, const Batch &batch, float lr) {
  int step = executor.findStep(plan::StepRole::Train);
  bind(executor, step, batch);
  executor.setInput(step, "lr", &lr, 4);
  executor.run(step, int64_t(batch.labels.size()));
  return executor.getScalarOutput(step, "loss");
}

std::vector<float> read(const Executor &executor, size_t index) {
  std::vector<float> values(executor.getPersistentBytes(index) / 4);
  executor.readPersistent(index, values.data());
  return values;
}

/// max |a - b| over max |b|: a tensor-relative error.
double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return diff / scale;
}

/// What a train step left behind.
struct StepResult {
  double loss, correct;
  std::vector<float> logits;
};

StepResult trainAndRecord(Executor &executor, const Batch &batch) {
  StepResult r;
  r.loss = trainStep(executor, batch, 0.1f);
  int step = executor.findStep(plan::StepRole::Train);
  r.correct = executor.getScalarOutput(step, "correct");
  r.logits.resize(executor.getOutputBytes(step, "logits") / 4);
  executor.getOutput(step, "logits", r.logits.data(), r.logits.size() * 4);
  return r;
}

/// Trains the one-device plan, then the `split` plan, on the same batches
/// (full ones, then ragged ones) and compares losses, logits and every
/// device's copy of the state. One executor at a time: two with different
/// OpenMP thread shares would fight over the cores.
void expectMatchesOneDevice(const Rows &split, const Rows &ragged) {
  MlpPlanOptions o = smallMlp();
  o.batch = std::accumulate(split.begin(), split.end(), int64_t(0));
  Rows sizes(6, o.batch);
  sizes.insert(sizes.end(), ragged.begin(), ragged.end());
  std::vector<Batch> batches;
  for (int64_t rows : sizes)
    batches.push_back(randomBatch(o, rows, uint32_t(10 + batches.size())));

  std::vector<StepResult> expected;
  std::vector<std::vector<float>> expectedState;
  {
    std::unique_ptr<Executor> one = makeExecutor(o);
    for (const Batch &batch : batches)
      expected.push_back(trainAndRecord(*one, batch));
    for (size_t p = 0; p < one->getNumPersistent(); ++p)
      expectedState.push_back(read(*one, p));
  }

  o.split = split;
  std::unique_ptr<Executor> many = makeExecutor(o);
  int step = many->findStep(plan::StepRole::Train);
  ASSERT_EQ(many->getMaxBatch(step), o.batch);
  ASSERT_EQ(many->getNumReplicas(step), int(split.size()));
  for (size_t i = 0; i < batches.size(); ++i) {
    StepResult actual = trainAndRecord(*many, batches[i]);
    int64_t rows = sizes[i];
    EXPECT_NEAR(actual.loss, expected[i].loss, 1e-6 * expected[i].loss)
        << "rows " << rows;
    EXPECT_EQ(actual.correct, expected[i].correct);
    ASSERT_EQ(actual.logits.size(), expected[i].logits.size());
    EXPECT_LE(relativeError(actual.logits, expected[i].logits), 1e-6)
        << "rows " << rows;
    Rows rowsPerDevice = many->getLastSplit(step);
    EXPECT_EQ(
        std::accumulate(rowsPerDevice.begin(), rowsPerDevice.end(), int64_t(0)),
        rows);
    std::vector<double> losses = many->getReplicaScalarOutputs(step, "loss");
    ASSERT_EQ(losses.size(), split.size());
    for (size_t d = 0; d < split.size(); ++d)
      EXPECT_TRUE(rowsPerDevice[d] > 0 || losses[d] == 0.0)
          << "device " << d << " has no rows but a loss";
  }
  EXPECT_EQ(many->getOptimizerStep(), int64_t(batches.size()));
  size_t perDevice = expectedState.size();
  ASSERT_EQ(many->getNumPersistent(), perDevice * split.size());
  ASSERT_EQ(many->getPrimaryPersistent().size(), perDevice);
  for (size_t p = 0; p < perDevice; ++p) {
    EXPECT_LE(relativeError(read(*many, p), expectedState[p]), 1e-6)
        << "tensor " << p;
    for (size_t d = 1; d < split.size(); ++d)
      EXPECT_EQ(read(*many, d * perDevice + p), read(*many, p))
          << "tensor " << p << " on device " << d;
  }
}

TEST(DataParallelTest, TwoDevicesEvenSplitMatchOneDevice) {
  expectMatchesOneDevice({4, 4}, {5, 1, 7});
}

TEST(DataParallelTest, TwoDevicesUnevenSplitMatchOneDevice) {
  expectMatchesOneDevice({3, 5}, {5, 1, 2});
}

TEST(DataParallelTest, ThreeDevicesMatchOneDevice) {
  expectMatchesOneDevice({4, 4, 4}, {10, 5, 1});
  expectMatchesOneDevice({2, 3, 4}, {5, 2});
}

TEST(DataParallelTest, OneDeviceWithCollectivesIsThePlainPlan) {
  expectMatchesOneDevice({8}, {3});
}

TEST(DataParallelTest, RaggedBatchGivesADeviceNoRows) {
  MlpPlanOptions o = smallMlp({4, 4});
  std::unique_ptr<Executor> executor = makeExecutor(o);
  int step = executor->findStep(plan::StepRole::Train);
  trainStep(*executor, randomBatch(o, 5, 1), 0.1f);
  EXPECT_EQ(executor->getLastSplit(step), (Rows{3, 2}));
  trainStep(*executor, randomBatch(o, 1, 2), 0.1f);
  EXPECT_EQ(executor->getLastSplit(step), (Rows{1, 0}));
  EXPECT_EQ(executor->getReplicaOutputBytes(step, 1, "logits"), 0u);
  EXPECT_EQ(executor->getOutputBytes(step, "logits"), 3 * 4u);
}

TEST(DataParallelTest, ReplicasStayBitwiseIdentical) {
  MlpPlanOptions o = smallMlp({3, 5, 2});
  o.optimizer = "adamw";
  o.weightDecay = 0.01;
  std::unique_ptr<Executor> executor = makeExecutor(o);
  for (uint32_t i = 0; i < 40; ++i)
    trainStep(*executor, randomBatch(o, i % 5 == 4 ? 1 + i % 9 : 10, i), 0.01f);
  size_t perDevice = executor->getNumPersistent() / 3;
  for (size_t p = 0; p < perDevice; ++p)
    for (size_t d = 1; d < 3; ++d) {
      std::vector<float> copy = read(*executor, d * perDevice + p),
                         first = read(*executor, p);
      EXPECT_EQ(0, std::memcmp(copy.data(), first.data(), copy.size() * 4))
          << "tensor " << p << " on device " << d;
    }
}

TEST(DataParallelTest, EvalStepCountsOverEveryReplica) {
  MlpPlanOptions o = smallMlp();
  o.batch = 6;
  Batch batch = randomBatch(o, 6, 3);
  double correct, loss;
  {
    std::unique_ptr<Executor> one = makeExecutor(o);
    int eval = one->findStep(plan::StepRole::Eval);
    bind(*one, eval, batch);
    one->run(eval, 6);
    correct = one->getScalarOutput(eval, "correct");
    loss = one->getScalarOutput(eval, "loss");
  }
  o.split = {2, 4};
  std::unique_ptr<Executor> many = makeExecutor(o);
  int eval = many->findStep(plan::StepRole::Eval);
  bind(*many, eval, batch);
  many->run(eval, 6);
  EXPECT_EQ(many->getScalarOutput(eval, "correct"), correct);
  EXPECT_NEAR(many->getScalarOutput(eval, "loss"), loss, 1e-6);
  std::vector<double> counts = many->getReplicaScalarOutputs(eval, "correct");
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0] + counts[1], correct);
  EXPECT_EQ(many->getOptimizerStep(), 0);
}

TEST(DataParallelTest, MeanAllReduceAveragesTheGradients) {
  // SGD without momentum: lr * mean(g) over 2 devices = lr/2 * sum(g).
  MlpPlanOptions o = smallMlp({4, 4});
  o.momentum = 0;
  std::unique_ptr<Executor> sum = makeExecutor(o);
  o.allReduceAttrs = true;
  o.allReduceOp = plan::ReduceOp::Mean;
  std::unique_ptr<Executor> mean = makeExecutor(o);
  Batch batch = randomBatch(o, 8, 4);
  trainStep(*sum, batch, 0.05f);
  trainStep(*mean, batch, 0.1f);
  for (size_t p = 0; p < 4; ++p)
    EXPECT_LE(relativeError(read(*mean, p), read(*sum, p)), 1e-6);
}

/// A CPU device whose kernels of one kind fail while `failing` is set: a
/// kernel failure on one replica only.
class FailingDevice : public Device {
public:
  FailingDevice(std::unique_ptr<Device> inner, plan::Kernel kernel,
                const std::atomic<bool> &failing)
      : inner(std::move(inner)), kernel(kernel), failing(failing) {}

  const std::string &getName() const override { return inner->getName(); }
  void *allocate(size_t bytes) override { return inner->allocate(bytes); }
  void deallocate(void *pointer) override { inner->deallocate(pointer); }
  void *allocateHost(size_t bytes) override {
    return inner->allocateHost(bytes);
  }
  void deallocateHost(void *pointer) override {
    inner->deallocateHost(pointer);
  }
  void copyFromHost(void *dst, const void *src, size_t bytes) override {
    inner->copyFromHost(dst, src, bytes);
  }
  void copyToHost(void *dst, const void *src, size_t bytes) override {
    inner->copyToHost(dst, src, bytes);
  }
  std::unique_ptr<Stream> createStream(plan::StreamKind kind) override {
    return std::make_unique<FailingStream>(inner->createStream(kind), *this);
  }
  std::unique_ptr<Event> createEvent() override { return inner->createEvent(); }

private:
  class FailingStream : public Stream {
  public:
    FailingStream(std::unique_ptr<Stream> inner, const FailingDevice &device)
        : inner(std::move(inner)), device(device) {}
    void launch(plan::KernelCall call) override {
      // A kernel no backend has: the shared dispatch throws on the stream.
      if (call.kernel == device.kernel && device.failing)
        call.kernel = static_cast<plan::Kernel>(999);
      inner->launch(std::move(call));
    }
    void enqueueHostFunction(std::function<void()> function) override {
      inner->enqueueHostFunction(std::move(function));
    }
    void copyFromHost(void *dst, const void *src, size_t bytes) override {
      inner->copyFromHost(dst, src, bytes);
    }
    void record(Event &event) override { inner->record(event); }
    void wait(Event &event) override { inner->wait(event); }
    void synchronize() override { inner->synchronize(); }

  private:
    std::unique_ptr<Stream> inner;
    const FailingDevice &device;
  };

  std::unique_ptr<Device> inner;
  plan::Kernel kernel;
  const std::atomic<bool> &failing;
};

TEST(DataParallelTest, AKernelFailureOnOneReplicaNeitherHangsNorSplits) {
  MlpPlanOptions o = smallMlp({4, 4});
  std::atomic<bool> failing{true};
  Executor executor(
      plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(o), "dp.plan"),
      [&](const std::string &name,
          const DeviceOptions &options) -> std::unique_ptr<Device> {
        std::unique_ptr<Device> device = createDevice(name, options);
        if (name != "cpu:1")
          return device;
        return std::make_unique<FailingDevice>(
            std::move(device), plan::Kernel::CrossEntropyBackward, failing);
      });
  Batch batch = randomBatch(o, 8, 5);
  try {
    trainStep(executor, batch, 0.1f);
    FAIL() << "expected an error";
  } catch (const std::runtime_error &error) {
    EXPECT_STREQ(error.what(), "step 'train_step': kernel 999 (unknown) is "
                               "not supported on the CPU");
  }
  size_t perDevice = executor.getNumPersistent() / 2;
  for (size_t p = 0; p < perDevice; ++p)
    EXPECT_EQ(read(executor, p), read(executor, perDevice + p));
  failing = false;
  trainStep(executor, batch, 0.1f);
}

TEST(DataParallelTest, LabelsOutsideTheClassesAreRefusedWhenBound) {
  MlpPlanOptions o = smallMlp({4, 4});
  std::unique_ptr<Executor> executor = makeExecutor(o);
  Batch batch = randomBatch(o, 8, 5);
  batch.labels[6] = 9; // a row of device 1
  try {
    trainStep(*executor, batch, 0.1f);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument &error) {
    EXPECT_STREQ(error.what(), "step 'train_step': input 'labels' row 6 "
                               "holds label 9, outside the 3 classes");
  }
  batch.labels[6] = -1;
  EXPECT_THROW(trainStep(*executor, batch, 0.1f), std::invalid_argument);
  batch.labels[6] = 2;
  trainStep(*executor, batch, 0.1f);
}

TEST(DataParallelTest, BatchInputsMustHoldTheRowsRun) {
  MlpPlanOptions o = smallMlp({4, 4});
  std::unique_ptr<Executor> executor = makeExecutor(o);
  int step = executor->findStep(plan::StepRole::Train);
  Batch batch = randomBatch(o, 6, 6);
  bind(*executor, step, batch);
  EXPECT_THROW(executor->run(step, 8), std::invalid_argument);
  EXPECT_THROW(executor->setInput(step, "images", batch.images.data(), 10),
               std::invalid_argument); // not whole rows
  std::vector<float> tooMany(9 * 16);
  EXPECT_THROW(
      executor->setInput(step, "images", tooMany.data(), tooMany.size() * 4),
      std::invalid_argument);
}

TEST(DataParallelTest, WritePersistentReachesEveryDevice) {
  std::unique_ptr<Executor> executor = makeExecutor(smallMlp({4, 4}));
  size_t perDevice = executor->getNumPersistent() / 2;
  std::vector<float> values(executor->getPersistentBytes(1) / 4, 0.25f);
  executor->writePersistent(perDevice + 1, values.data());
  EXPECT_EQ(read(*executor, 1), values);
  EXPECT_EQ(read(*executor, perDevice + 1), values);
}

TEST(DataParallelTest, EachDeviceRunsOnItsShareOfTheCores) {
  int all = omp_get_max_threads();
  DeviceOptions options;
  options.numLocalDevices = 2;
  std::unique_ptr<Device> device = createDevice("cpu:1", options);
  std::unique_ptr<Stream> stream =
      device->createStream(plan::StreamKind::Compute);
  int seen = 0;
  stream->enqueueHostFunction([&] { seen = omp_get_max_threads(); });
  stream->synchronize();
  EXPECT_EQ(seen, std::max(1, all / 2));
  EXPECT_EQ(omp_get_max_threads(), all) << "the caller's count is its own";
}

//===----------------------------------------------------------------------===//
// Kernels on a replica without rows
//===----------------------------------------------------------------------===//

plan::TensorArg arg(std::vector<float> &storage, std::vector<int64_t> dims) {
  plan::TensorArg a;
  a.present = true;
  a.data = storage.data();
  a.dims = std::move(dims);
  return a;
}

TEST(DataParallelTest, ZeroRowKernelsZeroTheirSumsAndTouchNothingElse) {
  kernels::KernelContext context;
  std::vector<float> x(1), dy(1), w(4 * 2 * 3 * 3, 7.f), dw(w.size(), 7.f),
      db(4, 7.f), loss(1, 7.f), logits(1), mean(2, 3.f), var(2, 5.f),
      scale(2, 1.f), shift(2), y(1), savedMean(2, 7.f), savedInvstd(2, 7.f);
  std::vector<int32_t> labels(1);

  plan::KernelCall conv;
  conv.kernel = plan::Kernel::Conv2dBackwardWeights;
  conv.operands = {arg(x, {0, 2, 5, 5}), arg(dy, {0, 4, 3, 3})};
  conv.results = {arg(dw, {4, 2, 3, 3}), arg(db, {4})};
  runCpuKernel(context, conv);
  EXPECT_EQ(dw, std::vector<float>(dw.size(), 0.f));
  EXPECT_EQ(db, std::vector<float>(4, 0.f));

  plan::KernelCall linear;
  linear.kernel = plan::Kernel::LinearForward;
  linear.operands = {arg(x, {0, 3}), arg(w, {2, 3})};
  linear.results = {arg(y, {0, 2})};
  runCpuKernel(context, linear); // no rows, nothing to write

  plan::KernelCall bn;
  bn.kernel = plan::Kernel::BatchNormTrainingForward;
  bn.operands = {arg(x, {0, 2, 3, 3}), arg(scale, {2}), arg(shift, {2}),
                 arg(mean, {2}), arg(var, {2})};
  bn.results = {arg(y, {0, 2, 3, 3}), arg(savedMean, {2}),
                arg(savedInvstd, {2})};
  runCpuKernel(context, bn);
  EXPECT_EQ(savedMean, std::vector<float>(2, 0.f));
  EXPECT_EQ(mean, std::vector<float>(2, 3.f)) << "running stats untouched";
  EXPECT_EQ(var, std::vector<float>(2, 5.f));

  plan::KernelCall ce;
  ce.kernel = plan::Kernel::CrossEntropyForward;
  ce.batch = 8;
  ce.operands = {arg(logits, {0, 3}), arg(x, {0})};
  ce.operands[1].dtype = plan::DType::I32;
  ce.operands[1].data = labels.data();
  ce.results = {arg(loss, {})};
  runCpuKernel(context, ce);
  EXPECT_EQ(loss[0], 0.f);
}

//===----------------------------------------------------------------------===//
// What the loader requires of a data-parallel plan
//===----------------------------------------------------------------------===//

void expectPlanError(const plan::PlanT &object, const std::string &message) {
  try {
    plan::LoadedPlan::fromBytes(plan::test::packPlan(object), "dp.plan");
    FAIL() << "expected: " << message;
  } catch (const plan::PlanError &error) {
    EXPECT_EQ(std::string(error.what()), "dp.plan: " + message);
  }
}

TEST(DataParallelTest, LoaderChecksReplicasStateAndSplit) {
  auto build = [] { return plan::test::buildMlpPlanObject(smallMlp({4, 4})); };
  {
    plan::PlanT object = build();
    object.split = {4, 3};
    expectPlanError(object, "split [4, 3] sums to 7, not the compiled batch 8");
  }
  {
    plan::PlanT object = build();
    object.steps[2]->device = 0; // device 1's train_step
    expectPlanError(object, "two steps are named 'train_step' on device 0");
  }
  {
    plan::PlanT object = build();
    object.persistent.back()->device = 0;
    expectPlanError(object, "persistent tensor " +
                                std::to_string(object.persistent.size() - 1) +
                                " ('b2.momentum_buffer'): the name is used "
                                "twice on device 0");
  }
  {
    plan::PlanT object = build();
    object.steps.erase(object.steps.begin() + 2); // device 1's train_step
    expectPlanError(object, "step 'train_step' has collectives but replicas "
                            "on 1 of the 2 devices");
  }
  {
    plan::PlanT object = build();
    // Device 1's train_step reading device 0's w1.
    for (auto &tensor : object.steps[2]->tensors)
      if (tensor->name == "w1")
        tensor->persistent = 0;
    EXPECT_THROW(
        plan::LoadedPlan::fromBytes(plan::test::packPlan(object), "dp.plan"),
        plan::PlanError);
  }
  {
    plan::PlanT object = build();
    // All-reducing the logits, which have a batch dim.
    auto &comm = object.steps[0]->streams[1]->instructions[0];
    for (size_t t = 0; t < object.steps[0]->tensors.size(); ++t)
      if (object.steps[0]->tensors[t]->name == "logits")
        comm->operands = {int(t)};
    EXPECT_THROW(
        plan::LoadedPlan::fromBytes(plan::test::packPlan(object), "dp.plan"),
        plan::PlanError);
  }
}

} // namespace
} // namespace dpc::rt
