//===- PlanOrderTest.cpp - reads, writes and what a step holds ------------===//
//
// Reads before writes and across unordered streams, outputs never written,
// alias chains, the embedded ONNX model, precision, cast slots and shards.
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

TEST(PlanLoaderTest, PrecisionIsF32Bf16OrTf32OnConvolutionsAndMatmulsOnly) {
  PlanT plan = test::buildMlpPlanObject(smallMlp());
  InstructionT &linear = *plan.steps[0]->streams[0]->instructions[0];
  linear.precision = DType::BF16;
  EXPECT_EQ(loadError(plan), "");
  linear.precision = DType::TF32; // loads; the CPU refuses it when it runs
  EXPECT_EQ(loadError(plan), "");
  linear.precision = DType::I32;
  EXPECT_EQ(loadError(plan), "bad.plan: step 'train_step', stream 0, "
                             "instruction 0 (LinearForward): precision I32 "
                             "is none of F32, BF16 and TF32");
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
