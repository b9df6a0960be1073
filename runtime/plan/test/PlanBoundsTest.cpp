//===- PlanBoundsTest.cpp - indexes, sizes and kernels of a plan ----------===//
//
// Tensor indexes, arena offsets, shapes, aliases, kernel attributes and
// operands, events, and counts from the file bounded before any allocation.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanChecksum.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/PlanMemory.h"
#include "runtime/plan/PlanVersion.h"
#include "runtime/plan/test/TestPlans.h"

#include <gtest/gtest.h>

#include "runtime/plan/test/PlanLoaderTestUtils.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace dpc::plan {
namespace {

using namespace loader_test;

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

TEST(PlanLoaderTest, ACopyStartsAsTheTensorWithDataOfItsName) {
  // A replicated plan holds each initial value once: a device's copy that
  // starts as another's needs a whole tensor of its name and shape with
  // data.
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  plan.persistent[0]->init = InitKind::SameAsCopy;
  plan.persistent[0]->data.clear();
  EXPECT_NE(loadError(plan).find("starts as another device's copy, but no "
                                 "whole tensor of its name"),
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

} // namespace
} // namespace dpc::plan
