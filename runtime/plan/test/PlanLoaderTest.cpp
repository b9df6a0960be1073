//===- PlanLoaderTest.cpp - every bad plan is one clear line --------------===//
// size: to split (issue 26) with PlanLoader.cpp, by family of checks.

#include "runtime/plan/PlanLoader.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanChecksum.h"
#include "runtime/plan/PlanMemory.h"
#include "runtime/plan/PlanVersion.h"
#include "runtime/plan/test/TestPlans.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace dpc::plan {
namespace {

using test::MlpPlanOptions;

MlpPlanOptions smallMlp() {
  MlpPlanOptions o;
  o.batch = 4;
  o.height = o.width = 4;
  o.hidden = 5;
  o.classes = 3;
  return o;
}

/// The message of the PlanError that loading `bytes` throws ("" if none).
std::string loadError(const std::vector<uint8_t> &bytes) {
  try {
    LoadedPlan::fromBytes(bytes, "bad.plan");
  } catch (const PlanError &error) {
    std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("bad.plan: ", 0), 0u) << message;
    return message;
  }
  return "";
}

std::string loadError(const PlanT &plan) {
  return loadError(test::packPlan(plan));
}

/// The tensor of `step` called `name`.
TensorT &tensorNamed(StepT &step, const std::string &name) {
  for (auto &tensor : step.tensors)
    if (tensor->name == name)
      return *tensor;
  ADD_FAILURE() << "no tensor " << name;
  return *step.tensors[0];
}

TEST(PlanLoaderTest, LoadsAWellFormedPlan) {
  auto plan = LoadedPlan::fromBytes(test::buildMlpPlan(smallMlp()), "ok.plan");
  EXPECT_EQ(plan->get().version(), kPlanVersion);
  EXPECT_EQ(plan->findStep(StepRole::Train), 0);
  EXPECT_EQ(plan->findStep(StepRole::Eval), 1);
  EXPECT_EQ(plan->findStep(StepRole::AccumFirst), -1);
  EXPECT_EQ(plan->getMaxBatch(0), 4);
}

TEST(PlanLoaderTest, ReadsFiles) {
  std::string path = testing::TempDir() + "/loader_ok.dpcplan";
  ASSERT_TRUE(test::writeFile(path, test::buildMlpPlan(smallMlp())));
  EXPECT_EQ(LoadedPlan::load(path)->getName(), path);
  std::filesystem::remove(path);
  try {
    LoadedPlan::load(path);
    FAIL();
  } catch (const PlanError &error) {
    EXPECT_EQ(std::string(error.what()),
              path + ": cannot read the file (No such file or directory)");
  }
}

TEST(PlanLoaderTest, WrongIdentifier) {
  std::vector<uint8_t> bytes = test::buildMlpPlan(smallMlp());
  std::copy_n("NOPE", 4, bytes.begin() + 4);
  EXPECT_EQ(loadError(bytes),
            "bad.plan: not a dpc plan (no \"DPCP\" file identifier)");
  std::string text = "hello, this is not a plan at all";
  EXPECT_EQ(loadError(std::vector<uint8_t>(text.begin(), text.end())),
            "bad.plan: not a dpc plan (no \"DPCP\" file identifier)");
  EXPECT_EQ(loadError(std::vector<uint8_t>{}),
            "bad.plan: not a dpc plan (no \"DPCP\" file identifier)");
}

TEST(PlanLoaderTest, RolesNameOneStepAndOneBindingEach) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  EXPECT_EQ(loadError(plan), "");
  plan.steps[1]->role = StepRole::Train;
  EXPECT_EQ(loadError(plan), "bad.plan: steps 'train_step' and 'eval_step' "
                             "both have role Train");
  plan.steps[1]->role = StepRole::AccumFirst;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step' has role "
                             "AccumFirst, but grad_accum is 1");
  plan.steps[1]->role = static_cast<StepRole>(9);
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': unknown role 9");
  plan.steps[1]->role = StepRole::Eval;
  for (auto &input : plan.steps[0]->inputs)
    if (input->name == "images")
      input->role = InputRole::Labels;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': inputs 'images' "
                             "and 'labels' both have role Labels");
  for (auto &input : plan.steps[0]->inputs)
    if (input->name == "images")
      input->role = InputRole::Data;
  EXPECT_EQ(loadError(plan), "");
  for (auto &output : plan.steps[0]->outputs)
    if (output->name == "correct")
      output->output_role = OutputRole::Loss;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': outputs 'loss' "
                             "and 'correct' both have role Loss");
  for (auto &output : plan.steps[0]->outputs)
    if (output->name == "correct")
      output->output_role = static_cast<OutputRole>(7);
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': output 'correct' "
                             "has unknown role 7");
}

TEST(PlanLoaderTest, ReplicasShareTheirRole) {
  MlpPlanOptions options = smallMlp();
  options.split = {2, 2};
  PlanT plan = test::buildMlpPlanObject(options);
  EXPECT_EQ(loadError(plan), "");
  for (auto &step : plan.steps)
    if (step->name == "eval_step" && step->device == 1)
      step->role = StepRole::Other;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': the replica on "
                             "device 1 has role Other, the one on device 0 "
                             "has role Eval");
}

/// A two-device plan, as codegen writes one: steps train_step and
/// eval_step of device 0, then those of device 1.
PlanT buildTwoDevicePlan() {
  MlpPlanOptions options = smallMlp();
  options.split = {2, 2};
  PlanT plan = test::buildMlpPlanObject(options);
  EXPECT_EQ(loadError(plan), "");
  return plan;
}

/// The binding of `bindings` called `name`.
std::vector<std::unique_ptr<BindingT>>::iterator
bindingNamed(std::vector<std::unique_ptr<BindingT>> &bindings,
             const std::string &name) {
  return std::find_if(bindings.begin(), bindings.end(),
                      [&](const auto &b) { return b->name == name; });
}

TEST(PlanLoaderTest, ReplicasHaveTheSameOutputs) {
  // One device's loss renamed: the run would report another loss.
  PlanT plan = buildTwoDevicePlan();
  (*bindingNamed(plan.steps[2]->outputs, "loss"))->name = "loss2";
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': the replica on "
                             "device 1 has no output 'loss', the one on "
                             "device 0 has");
  // An eval step without its correct count on one device, either one.
  plan = buildTwoDevicePlan();
  plan.steps[3]->outputs.erase(bindingNamed(plan.steps[3]->outputs, "correct"));
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': the replica on "
                             "device 1 has no output 'correct', the one on "
                             "device 0 has");
  plan = buildTwoDevicePlan();
  plan.steps[1]->outputs.erase(bindingNamed(plan.steps[1]->outputs, "correct"));
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': the replica on "
                             "device 1 has output 'correct', the one on "
                             "device 0 has not");
}

TEST(PlanLoaderTest, ReplicasHaveTheSameSignature) {
  PlanT plan = buildTwoDevicePlan();
  (*bindingNamed(plan.steps[2]->inputs, "lr"))->role = InputRole::Data;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': input 'lr' has "
                             "role Data on device 1, LearningRate on device 0");
  plan = buildTwoDevicePlan();
  (*bindingNamed(plan.steps[3]->outputs, "logits"))->output_role =
      OutputRole::Other;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': output 'logits' has "
                             "role Other on device 1, Logits on device 0");
  plan = buildTwoDevicePlan();
  tensorNamed(*plan.steps[3], "correct").dtype = DType::I32;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step': output 'correct' "
                             "is I32 [] on device 1, I64 [] on device 0");
  // The batch may differ (each device's share), the other dims not.
  MlpPlanOptions uneven = smallMlp();
  uneven.split = {1, 3};
  EXPECT_EQ(loadError(test::buildMlpPlanObject(uneven)), "");
}

/// A layer's bias left out on one device only: that replica computes
/// another model, though its signature is the same.
TEST(PlanLoaderTest, ReplicasReadTheSameState) {
  PlanT plan = buildTwoDevicePlan();
  for (auto &call : plan.steps[2]->streams[0]->instructions)
    if (call->kernel == Kernel::LinearForward)
      call->operands[2] = -1;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': the replica on "
                             "device 1 never reads 'b1', the one on device 0 "
                             "does");
  // The optimizer reads every parameter whatever the model computes: its
  // reads do not count.
  plan = buildTwoDevicePlan();
  for (auto &call : plan.steps[0]->streams[0]->instructions)
    if (call->kernel == Kernel::LinearForward)
      call->operands[2] = -1;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': the replica on "
                             "device 1 reads 'b1', the one on device 0 never "
                             "does");
}

/// A weight relabelled as an input that nothing binds holds no value.
TEST(PlanLoaderTest, ReadOfAnUnboundInput) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  TensorT &w1 = tensorNamed(*plan.steps[1], "w1");
  w1.storage = Storage::Input;
  w1.persistent = -1;
  int t = 0;
  while (plan.steps[1]->tensors[t]->name != "w1")
    ++t;
  EXPECT_EQ(loadError(plan),
            "bad.plan: step 'eval_step', stream 0, instruction 0 "
            "(LinearForward): operand 1 (W) reads tensor " +
                std::to_string(t) + " ('w1'), an input that no binding fills");
}

TEST(PlanLoaderTest, GradAccumulatorsNeedAccumulation) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  plan.persistent.back()->kind = PersistentKind::GradAccumulator;
  EXPECT_NE(loadError(plan).find("' is a gradient accumulator, but "
                                 "grad_accum is 1"),
            std::string::npos);
}

TEST(PlanLoaderTest, WrongVersion) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  plan.version = 7;
  EXPECT_EQ(loadError(plan), "bad.plan: plan format version 7, this runtime "
                             "reads version " +
                                 std::to_string(kPlanVersion) +
                                 "; recompile the model");
}

TEST(PlanLoaderTest, Truncated) {
  std::vector<uint8_t> bytes = test::buildMlpPlan(smallMlp());
  for (size_t keep : {bytes.size() / 2, bytes.size() * 3 / 4, size_t(12)}) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + keep);
    EXPECT_EQ(loadError(cut), "bad.plan: corrupted plan (verification failed)")
        << keep;
  }
}

/// A changed weight (which the structural checks cannot see) fails the
/// checksum.
TEST(PlanLoaderTest, ChecksumMismatch) {
  auto plan = LoadedPlan::fromBytes(test::buildMlpPlan(smallMlp()), "ok.plan");
  const std::vector<uint8_t> &bytes = plan->getBytes();
  for (const PersistentTensor *p : *plan->get().persistent()) {
    if (!p->data())
      continue;
    std::vector<uint8_t> changed = bytes;
    changed[p->data()->data() + p->data()->size() / 2 - bytes.data()] ^= 0x10;
    EXPECT_EQ(loadError(changed),
              "bad.plan: corrupted plan (checksum mismatch: its contents "
              "changed since it was written)")
        << p->name()->str();
  }
}

/// Flipping any byte (and sealing the plan again, as a forger would) gives
/// a plan that either is rejected in one line or loads and runs without
/// crashing (e.g. a changed weight).
TEST(PlanLoaderTest, FlippedBytesNeverCrash) {
  MlpPlanOptions o = smallMlp();
  std::vector<uint8_t> bytes = test::buildMlpPlan(o);
  int loaded = 0, rejected = 0, ran = 0;
  for (size_t at = 0; at < bytes.size(); at += 5) {
    for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
      std::vector<uint8_t> flipped = bytes;
      flipped[at] ^= mask;
      sealPlan(flipped);
      std::shared_ptr<const LoadedPlan> plan;
      try {
        plan = LoadedPlan::fromBytes(flipped, "bad.plan");
      } catch (const PlanError &error) {
        ++rejected;
        EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
        continue;
      }
      ++loaded;
      // Run a few of the survivors end to end.
      if (ran >= 25 || (at % 7) != 0)
        continue;
      ++ran;
      try {
        rt::Executor executor(plan);
        for (int step = 0; step < 2; ++step) {
          std::vector<float> images(o.batch * o.height * o.width, 0.5f);
          std::vector<int32_t> labels(o.batch, 1);
          float lr = 0.1f;
          if (executor.findInput(step, "images"))
            executor.setInput(step, "images", images.data(), images.size() * 4);
          if (executor.findInput(step, "labels"))
            executor.setInput(step, "labels", labels.data(), labels.size() * 4);
          if (executor.findInput(step, "lr"))
            executor.setInput(step, "lr", &lr, 4);
          executor.run(step, std::max<int64_t>(1, executor.getMaxBatch(step)));
        }
      } catch (const std::exception &) {
        // Errors are fine; crashes are not.
      }
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(loaded, 0);
}

TEST(PlanLoaderTest, TensorIndexOutOfRange) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  plan.steps[0]->streams[0]->instructions[0]->operands[1] = 99;
  std::string numTensors = std::to_string(plan.steps[0]->tensors.size());
  EXPECT_EQ(loadError(plan),
            "bad.plan: step 'train_step', stream 0, instruction 0 "
            "(LinearForward): operand 1 is tensor 99, but the step has " +
                numTensors + " tensors");
}

TEST(PlanLoaderTest, ArenaOverflow) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  TensorT *loss = nullptr;
  for (auto &t : plan.steps[1]->tensors)
    if (t->name == "loss")
      loss = t.get();
  loss->offset = plan.steps[1]->arena_bytes;
  EXPECT_NE(loadError(plan).find("do not fit the arena"), std::string::npos);
}

// An offset near the int64 limit: the message names the end without
// overflowing (it printed a wrapped, negative sum).
TEST(PlanLoaderTest, ArenaOffsetNearTheLimit) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  for (auto &t : plan.steps[1]->tensors)
    if (t->name == "loss")
      t->offset = INT64_MAX - 3;
  std::string error = loadError(plan);
  EXPECT_NE(error.find("bytes [9223372036854775804, 9223372036854775804 + "
                       "4) do not fit the arena"),
            std::string::npos)
      << error;
}

TEST(PlanLoaderTest, PersistentIndexAndShape) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  for (auto &t : plan.steps[0]->tensors)
    if (t->name == "w1")
      t->persistent = 42;
  EXPECT_NE(loadError(plan).find("persistent index 42 is out of range"),
            std::string::npos);

  plan = test::buildMlpPlanObject(smallMlp());
  plan.persistent[0]->dims = {5, 15};
  plan.persistent[0]->data.resize(5 * 15 * 4);
  EXPECT_NE(loadError(plan).find("does not match persistent tensor 'w1'"),
            std::string::npos);

  plan = test::buildMlpPlanObject(smallMlp());
  plan.persistent[0]->data.resize(8);
  EXPECT_NE(loadError(plan).find("initial data has 8 bytes"),
            std::string::npos);
}

TEST(PlanLoaderTest, BadAliases) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  TensorT *x = nullptr;
  int xIndex = 0;
  for (size_t i = 0; i < plan.steps[0]->tensors.size(); ++i)
    if (plan.steps[0]->tensors[i]->name == "x")
      x = plan.steps[0]->tensors[i].get(), xIndex = int(i);
  x->alias = xIndex;
  EXPECT_NE(loadError(plan).find("is not another tensor"), std::string::npos);
  x->alias = 0;
  x->dims = {4, 17};
  std::string error = loadError(plan);
  EXPECT_NE(error.find("bytes at 0 do not fit"), std::string::npos) << error;
}

TEST(PlanLoaderTest, BatchAxisAndScaleAreChecked) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  TensorT &images = tensorNamed(*plan.steps[0], "images"); // [4, 1, 4, 4]
  images.batch_axis = 7;
  EXPECT_NE(loadError(plan).find("batch axis 7 is not a dim of [4, 1, 4, 4]"),
            std::string::npos);
  images.batch_axis = 0;
  images.batch_scale = 3;
  EXPECT_NE(loadError(plan).find("dim 0 of [4, 1, 4, 4] is not 3 times a "
                                 "batch"),
            std::string::npos);
  images.batch_scale = 2;
  EXPECT_NE(loadError(plan).find("differs from the step's other batch"),
            std::string::npos);
  // Dim 2 is 4 rows too, but the executor splits bindings by dim 0.
  images.batch_scale = 1;
  images.batch_axis = 2;
  EXPECT_NE(loadError(plan).find("input 'images' holds the batch in dim 2"),
            std::string::npos);
  images.batch_axis = 0;
  images.batch_dim = false;
  images.batch_scale = 4;
  EXPECT_NE(loadError(plan).find("a batch axis or scale without a batch dim"),
            std::string::npos);
}

TEST(PlanLoaderTest, AttributesMustMatchTheKernel) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  SgdAttrsT sgd;
  plan.steps[0]->streams[0]->instructions[0]->attrs.Set(sgd);
  EXPECT_EQ(loadError(plan),
            "bad.plan: step 'train_step', stream 0, instruction 0 "
            "(LinearForward): has SgdAttrs, expected NONE");
}

TEST(PlanLoaderTest, ShapesMustMatchTheKernel) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  // The first layer's output with a wrong width.
  for (auto &t : plan.steps[1]->tensors)
    if (t->name == "h1")
      t->dims = {4, 6};
  EXPECT_EQ(
      loadError(plan),
      "bad.plan: step 'eval_step', stream 0, instruction 0 "
      "(LinearForward): result 0 (Y) has 24 elements [4, 6], expected 20");
}

TEST(PlanLoaderTest, OperandCount) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  plan.steps[1]->streams[0]->instructions[1]->operands.push_back(0);
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step', stream 0, "
                             "instruction 1 (ReluForward): has 2 operands, "
                             "expected 1");
}

TEST(PlanLoaderTest, WorkspaceIsAFixedU8BufferOfAKernelThatTakesOne) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  StepT &step = *plan.steps[0];
  auto scratch = std::make_unique<TensorT>();
  scratch->name = "scratch";
  scratch->dtype = DType::U8;
  scratch->dims = {16};
  step.tensors.push_back(std::move(scratch));
  int workspace = int(step.tensors.size()) - 1;
  InstructionT &linear = *step.streams[0]->instructions[0];
  const std::string where = "bad.plan: step 'train_step', stream 0, "
                            "instruction 0 ";
  linear.workspace = workspace;
  EXPECT_EQ(loadError(plan),
            where + "(LinearForward): LinearForward takes no workspace");

  // A convolution may take one, but only of raw bytes.
  linear.kernel = Kernel::Conv2dForward;
  linear.workspace = 99;
  EXPECT_EQ(loadError(plan), where +
                                 "(Conv2dForward): workspace is tensor 99, "
                                 "but the step has " +
                                 std::to_string(step.tensors.size()) +
                                 " tensors");
  linear.workspace = linear.operands[1]; // the f32 weights
  EXPECT_EQ(loadError(plan), where + "(Conv2dForward): workspace tensor " +
                                 std::to_string(linear.workspace) +
                                 " is not a 1-D U8 buffer of a fixed size");
}

TEST(PlanLoaderTest, EventsThatCanNeverBeSignalled) {
  MlpPlanOptions o = smallMlp();
  o.twoStreams = true;
  PlanT plan = test::buildMlpPlanObject(o);
  plan.steps[0]->num_events = 2;
  plan.steps[0]->streams[0]->instructions[0]->wait_events.push_back(1);
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': event 1 is waited "
                             "for but never signalled");
  // Stream 0 waits for an event that only stream 1 signals, after waiting
  // for stream 0 itself: a cycle.
  plan.steps[0]->streams[1]->instructions.back()->signal_events.push_back(1);
  EXPECT_NE(loadError(plan).find("the streams deadlock"), std::string::npos);
  plan.steps[0]->streams[0]->instructions[0]->wait_events = {5};
  EXPECT_NE(loadError(plan).find("event 5 is out of range"), std::string::npos);
}

TEST(PlanLoaderTest, UnknownKernel) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  plan.steps[0]->streams[0]->instructions[0]->kernel = Kernel(999);
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step', stream 0, "
                             "instruction 0: kernel 999 is not supported by "
                             "this runtime");
}

//===----------------------------------------------------------------------===//
// Counts and sizes from the file are bounded before anything is allocated
//===----------------------------------------------------------------------===//

TEST(PlanLoaderTest, EventsBeyondThoseTheInstructionsNameAreRefused) {
  // 10^9 events would be gigabytes of bookkeeping in a file of a few KB.
  MlpPlanOptions o = smallMlp();
  o.twoStreams = true;
  PlanT plan = test::buildMlpPlanObject(o);
  plan.steps[0]->num_events = 1000000000;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': num_events "
                             "1000000000 exceeds the 2 waits and signals of "
                             "its instructions");
  plan.steps[0]->num_events = -1;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': negative "
                             "num_events");
}

TEST(PlanLoaderTest, StreamsDevicesAndRankAreBounded) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  for (int i = 0; i < 65; ++i)
    plan.steps[1]->streams.push_back(std::make_unique<StreamT>());
  EXPECT_EQ(loadError(plan),
            "bad.plan: step 'eval_step': 66 streams, more than 64");

  plan = test::buildMlpPlanObject(smallMlp());
  for (int i = 0; i < 65536; ++i) {
    plan.devices.push_back(std::make_unique<DeviceT>());
    plan.devices.back()->name = "cpu:" + std::to_string(i + 1);
  }
  EXPECT_EQ(loadError(plan),
            "bad.plan: the plan names 65537 devices, more than 65536");

  plan = test::buildMlpPlanObject(smallMlp());
  tensorNamed(*plan.steps[0], "loss").dims = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step': tensor 10 "
                             "('loss'): rank 9 exceeds 8");
}

TEST(PlanLoaderTest, DimsWhoseSizeOverflowsAreRefused) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  // 2^32 * 2^32 elements: the product wraps to 0 in 64 bits.
  plan.persistent[1]->dims = {int64_t(1) << 32, int64_t(1) << 32, 0};
  plan.persistent[1]->init = InitKind::Zeros;
  EXPECT_EQ(loadError(plan),
            "bad.plan: persistent tensor 1 ('b1'): invalid dims [4294967296, "
            "4294967296, 0] (negative, or more than 281474976710656 "
            "elements)");
  plan = test::buildMlpPlanObject(smallMlp());
  plan.steps[0]->arena_bytes = INT64_MAX;
  EXPECT_EQ(loadError(plan),
            "bad.plan: step 'train_step': arena_bytes 9223372036854775807 is "
            "not in [0, 281474976710656]");
}

TEST(PlanLoaderTest, StateBeyondAnyDeviceIsRefused) {
  // Zeros-initialized state needs no bytes in the file, only in memory:
  // 64 tensors of 2^46 bytes each.
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  for (int i = 0; i < 64; ++i) {
    auto state = std::make_unique<PersistentTensorT>();
    state->name = "huge" + std::to_string(i);
    state->dims = {int64_t(1) << 44};
    state->init = InitKind::Zeros;
    plan.persistent.push_back(std::move(state));
  }
  EXPECT_EQ(loadError(plan), "bad.plan: device cpu:0 would need more than "
                             "256 TiB (training state, arena and inputs)");
}

TEST(PlanLoaderTest, ImagesMustMatchTheSampleDims) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  // A 2^40 image dimension: an input of 2^44 bytes.
  tensorNamed(*plan.steps[0], "images").dims = {4, 1, int64_t(1) << 40, 1};
  EXPECT_EQ(loadError(plan),
            "bad.plan: step 'train_step': input 'images' [4, 1, "
            "1099511627776, 1] disagrees with sample_dims [1, 4, 4] "
            "(expected [4, 1, 4, 4] with a batch dim)");
}

/// FlatBuffers' verifier checks a vector's length field is 4-aligned, not
/// that its elements are: a forger can place a [long] at 4 mod 8, which
/// reading would be undefined behaviour (UBSan's alignment check in the
/// sanitizer build). The loader refuses it first.
TEST(PlanLoaderTest, MisalignedLongVector) {
  std::vector<uint8_t> bytes = test::buildMlpPlan(smallMlp());
  const auto *table =
      reinterpret_cast<const flatbuffers::Table *>(GetPlan(bytes.data()));
  size_t field = table->GetAddressOf(Plan::VT_SAMPLE_DIMS) - bytes.data();
  // The copy goes at the end, its length at 0 mod 8 so that its elements
  // start at 4 mod 8 (offsets only point forward).
  bytes.resize((bytes.size() + 7) / 8 * 8);
  size_t copy = bytes.size();
  std::vector<int64_t> dims = {1, 4, 4};
  bytes.resize(copy + 4 + dims.size() * sizeof(int64_t));
  flatbuffers::WriteScalar<uint32_t>(bytes.data() + copy, dims.size());
  std::memcpy(bytes.data() + copy + 4, dims.data(),
              dims.size() * sizeof(int64_t));
  flatbuffers::WriteScalar<flatbuffers::uoffset_t>(bytes.data() + field,
                                                   copy - field);
  ASSERT_TRUE(sealPlan(bytes));
  ASSERT_NE(reinterpret_cast<uintptr_t>(
                GetPlan(bytes.data())->sample_dims()->data()) %
                alignof(int64_t),
            0u);
  EXPECT_EQ(loadError(bytes),
            "bad.plan: a [long] (sample_dims) is not aligned to 8 bytes");
}

TEST(PlanLoaderTest, InputsCountTowardTheDeviceMemory) {
  // Images of 2^40 pixels agree with sample_dims and load; the run is
  // refused in one line before their buffers are allocated.
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  plan.sample_dims = {1, int64_t(1) << 20, int64_t(1) << 20};
  for (auto &step : plan.steps)
    tensorNamed(*step, "images").dims = {4, 1, int64_t(1) << 20,
                                         int64_t(1) << 20};
  auto loaded = LoadedPlan::fromBytes(test::packPlan(plan), "big.plan");
  setenv("DPC_DEVICE_MEMORY", "1GiB", 1);
  try {
    checkDeviceMemory(*loaded);
    ADD_FAILURE() << "no error";
  } catch (const PlanError &error) {
    EXPECT_EQ(std::string(error.what()),
              "big.plan: the plan needs 65536.00 GiB on cpu:0 but the device "
              "has 1.00 GiB (DPC_DEVICE_MEMORY)");
  }
  unsetenv("DPC_DEVICE_MEMORY");
}

/// An instruction whose operand nothing wrote reads the arena's garbage.
TEST(PlanLoaderTest, ReadBeforeWrite) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  auto &instructions = plan.steps[0]->streams[0]->instructions;
  int written = instructions[0]->results[0];
  instructions.erase(instructions.begin());
  std::string error = loadError(plan);
  EXPECT_NE(error.find("bad.plan: step 'train_step', stream 0, instruction 0 "),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("reads tensor " + std::to_string(written) + " ('" +
                       plan.steps[0]->tensors[written]->name +
                       "') before any instruction writes it"),
            std::string::npos)
      << error;
}

/// A write on another stream counts only once an event orders it first.
TEST(PlanLoaderTest, ReadUnorderedAcrossStreams) {
  MlpPlanOptions o = smallMlp();
  o.twoStreams = true;
  EXPECT_EQ(loadError(test::buildMlpPlanObject(o)), "");
  PlanT plan = test::buildMlpPlanObject(o);
  plan.steps[0]->streams[1]->instructions.front()->wait_events.clear();
  std::string error = loadError(plan);
  EXPECT_NE(error.find("bad.plan: step 'train_step', stream 1, instruction 0 "
                       "(SgdUpdate): operand 1 (Grad) reads tensor "),
            std::string::npos)
      << error;
}

TEST(PlanLoaderTest, OutputNeverWritten) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  StepT &step = *plan.steps[1];
  auto tensor = std::make_unique<TensorT>();
  tensor->name = "unwritten";
  tensor->dtype = DType::F32;
  tensor->dims = {1};
  tensor->storage = Storage::Arena;
  step.tensors.push_back(std::move(tensor));
  auto binding = std::make_unique<BindingT>();
  binding->name = "extra";
  binding->tensor = int(step.tensors.size() - 1);
  step.outputs.push_back(std::move(binding));
  EXPECT_EQ(loadError(plan),
            "bad.plan: step 'eval_step': output 'extra' (tensor " +
                std::to_string(step.tensors.size() - 1) +
                ") is never written by an instruction");
}

TEST(PlanLoaderTest, LongAliasChainsLoadInLinearTime) {
  // 20000 aliases, each of the one before: quadratic would take seconds
  // (and chains of a million, minutes).
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  StepT &step = *plan.steps[1];
  int previous = 0;
  for (int i = 0; i < 20000; ++i) {
    auto alias = std::make_unique<TensorT>(*step.tensors[0]);
    alias->name = "view" + std::to_string(i);
    alias->storage = Storage::Alias;
    alias->alias = previous;
    alias->batch_dim = false;
    alias->dims = {1};
    previous = static_cast<int>(step.tensors.size());
    step.tensors.push_back(std::move(alias));
  }
  EXPECT_EQ(loadError(plan), "");
  // The executor binds each view to its base through the loader's map.
  rt::Executor executor(LoadedPlan::fromBytes(test::packPlan(plan), "ok"));
  step.tensors[0]->storage = Storage::Alias;
  step.tensors[0]->alias = previous;
  EXPECT_EQ(loadError(plan),
            "bad.plan: step 'eval_step': tensor 0: its aliases form a cycle");
}

TEST(PlanLoaderTest, TheOnnxModelHoldsAGraphOrItsProblem) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  plan.onnx_model = std::make_unique<OnnxModelT>();
  OnnxModelT &model = *plan.onnx_model;
  model.ir_version = 8;
  model.opset = model.min_opset = 13;
  model.max_opset = 17;
  model.graph = {0x0a, 0x00};
  EXPECT_EQ(loadError(plan), "");
  model.problem = "no graph";
  EXPECT_EQ(loadError(plan), "bad.plan: onnx_model must hold either a graph "
                             "or the problem that prevents one");
  model.graph.clear();
  EXPECT_EQ(loadError(plan), "");
  model.problem.clear();
  model.graph = {0x0a, 0x00};
  model.min_opset = 18;
  EXPECT_EQ(loadError(plan), "bad.plan: onnx_model: IR version 8 or opsets "
                             "18 <= 13 <= 17 out of range");
  model.min_opset = 13;
  model.max_opset = int64_t(1) << 40;
  EXPECT_NE(loadError(plan), "");
  // The graph's forms at other opsets.
  model.max_opset = 17;
  auto form = std::make_unique<OnnxGraphFormT>();
  form->min_opset = 18;
  form->max_opset = 21;
  model.forms.push_back(std::move(form));
  EXPECT_EQ(loadError(plan), "");
  model.forms[0]->min_opset = 22;
  EXPECT_EQ(loadError(plan), "bad.plan: onnx_model: a graph form of opsets "
                             "22 to 21 out of range");
}

TEST(PlanLoaderTest, PrecisionIsF32OrBf16OnConvolutionsAndMatmulsOnly) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  InstructionT &linear = *plan.steps[0]->streams[0]->instructions[0];
  linear.precision = DType::BF16;
  EXPECT_EQ(loadError(plan), "");
  linear.precision = DType::I32;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step', stream 0, "
                             "instruction 0 (LinearForward): precision I32 "
                             "is neither F32 nor BF16");
  linear.precision = DType::F32;
  plan.steps[1]->streams[0]->instructions[1]->precision = DType::BF16;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'eval_step', stream 0, "
                             "instruction 1 (ReluForward): precision BF16 on "
                             "ReluForward, which computes in f32 only");
}

TEST(PlanLoaderTest, CastSlotIsReadOnlyAfterAFillOfTheSameTensor) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  auto &instructions = plan.steps[0]->streams[0]->instructions;
  InstructionT &forward = *instructions[0];
  auto weightGradient =
      std::find_if(instructions.begin(), instructions.end(), [&](auto &i) {
        return i->kernel == Kernel::LinearBackwardWeights &&
               i->operands[0] == forward.operands[0];
      });
  ASSERT_NE(weightGradient, instructions.end());
  int index = static_cast<int>(weightGradient - instructions.begin());
  std::string where = "bad.plan: step 'train_step', stream 0, instruction " +
                      std::to_string(index) + " (LinearBackwardWeights): ";
  forward.precision = (*weightGradient)->precision = DType::BF16;
  forward.cast_slot = (*weightGradient)->cast_slot = 1;
  (*weightGradient)->cast_reuse = true;
  EXPECT_EQ(loadError(plan), "");
  // A reuse with no fill before it.
  forward.cast_slot = 2;
  EXPECT_EQ(loadError(plan), where + "reads cast slot 1, which the stream's "
                                     "latest call to fill it filled with "
                                     "another tensor");
  // A later fill of the slot from another tensor: the reuse after it
  // would read that copy.
  forward.cast_slot = 1;
  auto backwardData =
      std::find_if(instructions.begin(), instructions.end(), [](auto &i) {
        return i->kernel == Kernel::LinearBackwardData;
      });
  ASSERT_NE(backwardData, instructions.end());
  ASSERT_LT(backwardData, weightGradient);
  // The second layer's forward, which reads the hidden activation.
  auto otherForward =
      std::find_if(instructions.begin() + 1, instructions.end(),
                   [](auto &i) { return i->kernel == Kernel::LinearForward; });
  ASSERT_LT(otherForward, weightGradient);
  (*otherForward)->precision = DType::BF16;
  (*otherForward)->cast_slot = 1;
  EXPECT_EQ(loadError(plan), where + "reads cast slot 1, which the stream's "
                                     "latest call to fill it filled with "
                                     "another tensor");
  (*otherForward)->cast_slot = 0;
  (*weightGradient)->cast_slot = 65;
  EXPECT_EQ(loadError(plan), where + "cast slot 65 is out of range [1, 64]");
  (*weightGradient)->cast_slot = 1;
  (*weightGradient)->precision = DType::F32;
  EXPECT_EQ(loadError(plan), where + "cast slot 1 on a call that does not "
                                     "share an operand's bf16 cast");
  (*weightGradient)->precision = DType::BF16;
  EXPECT_EQ(loadError(plan), "");
  // A kernel that shares no operand (SharedCast.h).
  (*backwardData)->precision = DType::BF16;
  (*backwardData)->cast_slot = 2;
  EXPECT_EQ(loadError(plan),
            "bad.plan: step 'train_step', stream 0, instruction " +
                std::to_string(backwardData - instructions.begin()) +
                " (LinearBackwardData): cast slot 2 on a call that does not "
                "share an operand's bf16 cast");
}

TEST(PlanLoaderTest, AShardIsARangeOfItsWhole) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  // The last 3 elements of a [2, 3] optimizer state.
  auto shard = std::make_unique<PersistentTensorT>();
  shard->name = "w1.momentum_buffer";
  shard->kind = PersistentKind::OptimizerState;
  shard->parameter = "w1";
  shard->init = InitKind::Zeros;
  shard->dims = {3};
  shard->logical_dims = {2, 3};
  shard->shard_offset = 3;
  PersistentTensorT &state = *shard;
  plan.persistent.push_back(std::move(shard));
  EXPECT_EQ(loadError(plan), "");
  state.shard_offset = 4;
  EXPECT_EQ(loadError(plan),
            "bad.plan: persistent tensor 4 ('w1.momentum_buffer'): shard [3] "
            "at element 4 is not a range of its whole [2, 3]");
  state.shard_offset = -1;
  EXPECT_NE(loadError(plan).find("is not a range"), std::string::npos);
  state.shard_offset = 0;
  state.dims = {1, 3};
  EXPECT_NE(loadError(plan).find("shard [1, 3] at element 0 is not a range"),
            std::string::npos);
}

} // namespace
} // namespace dpc::plan
