//===- TestPlans.cpp - plans built by hand for the runtime's tests --------===//

#include "runtime/plan/test/TestPlans.h"
#include "runtime/plan/PlanChecksum.h"
#include "runtime/plan/PlanVersion.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

namespace dpc::plan::test {
namespace {

/// Appends tensors and instructions to one step, planning the arena as a
/// bump allocator (no reuse: tests do not need it).
class StepBuilder {
public:
  StepBuilder(const std::string &name, StepRole role, int64_t batch,
              int device = 0)
      : batch(batch) {
    step = std::make_unique<StepT>();
    step->name = name;
    step->role = role;
    step->device = device;
  }

  int add(const std::string &name, std::vector<int64_t> dims, bool batchDim,
          Storage storage, DType dtype = DType::F32) {
    auto tensor = std::make_unique<TensorT>();
    tensor->name = name;
    tensor->dtype = dtype;
    if (batchDim)
      dims.insert(dims.begin(), batch);
    tensor->dims = dims;
    tensor->batch_dim = batchDim;
    tensor->storage = storage;
    if (storage == Storage::Arena) {
      int64_t bytes = 1;
      for (int64_t d : dims)
        bytes *= d;
      bytes *= dtype == DType::F64 || dtype == DType::I64 ? 8 : 4;
      tensor->offset = arenaTop;
      arenaTop += (bytes + 63) / 64 * 64;
      step->arena_bytes = arenaTop;
    }
    step->tensors.push_back(std::move(tensor));
    return static_cast<int>(step->tensors.size() - 1);
  }
  int arena(const std::string &name, std::vector<int64_t> dims, bool batchDim,
            DType dtype = DType::F32) {
    return add(name, std::move(dims), batchDim, Storage::Arena, dtype);
  }
  int input(const std::string &name, std::vector<int64_t> dims, bool batchDim,
            DType dtype = DType::F32, InputRole role = InputRole::Data) {
    int t = add(name, std::move(dims), batchDim, Storage::Input, dtype);
    auto binding = std::make_unique<BindingT>();
    binding->name = name;
    binding->tensor = t;
    binding->role = role;
    step->inputs.push_back(std::move(binding));
    return t;
  }
  int persistent(const PersistentTensorT &state, int index) {
    int t =
        add(state.name, state.dims, false, Storage::Persistent, state.dtype);
    step->tensors[t]->persistent = index;
    return t;
  }
  int alias(const std::string &name, int target, std::vector<int64_t> dims,
            bool batchDim) {
    int t = add(name, std::move(dims), batchDim, Storage::Alias);
    step->tensors[t]->alias = target;
    return t;
  }
  void output(const std::string &name, int t, OutputRole role) {
    auto binding = std::make_unique<BindingT>();
    binding->name = name;
    binding->tensor = t;
    binding->output_role = role;
    step->outputs.push_back(std::move(binding));
  }
  InstructionT &emit(int stream, Kernel kernel, std::vector<int32_t> operands,
                     std::vector<int32_t> results) {
    while (static_cast<int>(step->streams.size()) <= stream)
      step->streams.push_back(std::make_unique<StreamT>());
    auto instruction = std::make_unique<InstructionT>();
    instruction->kernel = kernel;
    instruction->operands = std::move(operands);
    instruction->results = std::move(results);
    step->streams[stream]->instructions.push_back(std::move(instruction));
    return *step->streams[stream]->instructions.back();
  }

  std::unique_ptr<StepT> step;

private:
  int64_t batch;
  int64_t arenaTop = 0;
};

std::unique_ptr<PersistentTensorT> makeState(const std::string &name,
                                             PersistentKind kind,
                                             std::vector<int64_t> dims) {
  auto state = std::make_unique<PersistentTensorT>();
  state->name = name;
  state->kind = kind;
  state->dtype = DType::F32;
  state->dims = std::move(dims);
  state->init = InitKind::Zeros;
  return state;
}

void setData(PersistentTensorT &state, const std::vector<float> &values) {
  state.init = InitKind::Data;
  state.data.resize(values.size() * sizeof(float));
  std::memcpy(state.data.data(), values.data(), state.data.size());
}

} // namespace

std::vector<float> xavierUniform(int64_t fanOut, int64_t fanIn, uint32_t seed) {
  std::mt19937 random(seed);
  float bound = std::sqrt(6.0f / static_cast<float>(fanIn + fanOut));
  std::uniform_real_distribution<float> uniform(-bound, bound);
  std::vector<float> values(fanOut * fanIn);
  for (float &v : values)
    v = uniform(random);
  return values;
}

// size: to shorten (issue 26): one builder per step (forward, backward,
// updates) would read better.
PlanT buildMlpPlanObject(const MlpPlanOptions &options) {
  MlpPlanOptions o = options;
  bool parallel = !o.split.empty();
  std::vector<int64_t> shares = parallel ? o.split : std::vector{o.batch};
  o.batch = 0;
  for (int64_t share : shares)
    o.batch += share;
  PlanT plan;
  plan.version = kPlanVersion;
  plan.producer = "dpc runtime tests";
  plan.model = "mlp";
  plan.compiled_batch = o.batch;
  plan.sample_dims = {o.channels, o.height, o.width};
  plan.num_classes = o.classes;
  plan.optimizer = o.optimizer;
  if (parallel)
    plan.split = shares;
  for (size_t d = 0; d < shares.size(); ++d) {
    auto device = std::make_unique<DeviceT>();
    device->name = "cpu:" + std::to_string(d);
    plan.devices.push_back(std::move(device));
  }

  int64_t features = o.channels * o.height * o.width;
  // Layers: (out, in) per linear layer.
  std::vector<std::pair<int64_t, int64_t>> layers;
  if (o.hidden > 0)
    layers = {{o.hidden, features}, {o.classes, o.hidden}};
  else
    layers = {{o.classes, features}};
  std::vector<int> weightIndex, biasIndex;
  for (size_t l = 0; l < layers.size(); ++l) {
    auto [out, in] = layers[l];
    auto w = makeState("w" + std::to_string(l + 1), PersistentKind::Parameter,
                       {out, in});
    setData(*w, xavierUniform(out, in, o.initSeed + uint32_t(l)));
    weightIndex.push_back(static_cast<int>(plan.persistent.size()));
    plan.persistent.push_back(std::move(w));
    biasIndex.push_back(static_cast<int>(plan.persistent.size()));
    plan.persistent.push_back(makeState("b" + std::to_string(l + 1),
                                        PersistentKind::Parameter, {out}));
  }
  // Optimizer state per parameter, in parameter order.
  std::vector<std::vector<int>> stateIndex;
  size_t numParams = plan.persistent.size();
  for (size_t p = 0; p < numParams; ++p) {
    std::vector<std::string> kinds;
    if (o.optimizer == "adamw")
      kinds = {"exp_avg", "exp_avg_sq"};
    else if (o.momentum != 0.0)
      kinds = {"momentum_buffer"};
    std::vector<int> indices;
    for (const std::string &kind : kinds) {
      const PersistentTensorT &param = *plan.persistent[p];
      auto state = makeState(param.name + "." + kind,
                             PersistentKind::OptimizerState, param.dims);
      state->parameter = param.name;
      indices.push_back(static_cast<int>(plan.persistent.size()));
      plan.persistent.push_back(std::move(state));
    }
    stateIndex.push_back(indices);
  }
  // Every other device's copy of the state, in the same order.
  size_t perDevice = plan.persistent.size();
  for (size_t d = 1; d < shares.size(); ++d)
    for (size_t p = 0; p < perDevice; ++p) {
      auto copy = std::make_unique<PersistentTensorT>(*plan.persistent[p]);
      copy->device = static_cast<int>(d);
      plan.persistent.push_back(std::move(copy));
    }

  for (size_t d = 0; d < shares.size(); ++d) {
    // Persistent tensor `p` of device 0 as this device's copy.
    int offset = static_cast<int>(d * perDevice);
    auto state = [&](int p) -> std::pair<const PersistentTensorT &, int> {
      return {*plan.persistent[p + offset], p + offset};
    };
    auto forward = [&](StepBuilder &b, int &x, std::vector<int> &params,
                       std::vector<int> &activations) {
      int images = b.input("images", {o.channels, o.height, o.width}, true);
      int labels = b.input("labels", {}, true, DType::I32, InputRole::Labels);
      x = b.alias("x", images, {features}, true);
      int current = x;
      for (size_t l = 0; l < layers.size(); ++l) {
        auto [wState, wIndex] = state(weightIndex[l]);
        auto [bState, bIndex] = state(biasIndex[l]);
        int w = b.persistent(wState, wIndex);
        int bias = b.persistent(bState, bIndex);
        params.push_back(w);
        params.push_back(bias);
        bool last = l + 1 == layers.size();
        int y = b.arena(last ? "logits" : "h" + std::to_string(l + 1),
                        {layers[l].first}, true);
        b.emit(0, Kernel::LinearForward, {current, w, bias}, {y});
        if (!last) {
          int a = b.arena("a" + std::to_string(l + 1), {layers[l].first}, true);
          b.emit(0, Kernel::ReluForward, {y}, {a});
          activations.push_back(a);
          current = a;
        } else {
          activations.push_back(y);
        }
      }
      int logits = activations.back();
      int loss = b.arena("loss", {}, false);
      int correct = b.arena("correct", {}, false, o.correctDtype);
      b.emit(0, Kernel::CrossEntropyForward, {logits, labels}, {loss});
      b.emit(0, Kernel::CorrectCount, {logits, labels}, {correct});
      b.output("loss", loss, OutputRole::Loss);
      b.output("correct", correct, OutputRole::Correct);
      b.output("logits", logits, OutputRole::Logits);
      return labels;
    };

    // train_step
    {
      StepBuilder b("train_step", StepRole::Train, shares[d], int(d));
      int x;
      std::vector<int> params, activations;
      int labels = forward(b, x, params, activations);
      int lr = b.input("lr", {}, false, DType::F32, InputRole::LearningRate);
      int step = o.optimizer == "adamw" ? b.input("step", {}, false, DType::I64,
                                                  InputRole::OptimizerStep)
                                        : -1;
      int logits = activations.back();
      int dloss = b.arena("dloss", {}, false);
      auto &fill = b.emit(0, Kernel::Fill, {}, {dloss});
      FillAttrsT fillAttrs;
      fillAttrs.value = 1.0;
      fill.attrs.Set(fillAttrs);
      int dy = b.arena("dlogits", {o.classes}, true);
      b.emit(0, Kernel::CrossEntropyBackward, {logits, labels, dloss}, {dy});

      auto update = [&](int stream, size_t p, int grad) {
        int param = params[p];
        std::vector<int32_t> operands = {param, grad};
        int persistentIndex = b.step->tensors[param]->persistent - offset;
        std::vector<int> states;
        for (int s : stateIndex[persistentIndex]) {
          auto [sState, sIndex] = state(s);
          states.push_back(b.persistent(sState, sIndex));
        }
        if (o.optimizer == "adamw") {
          operands.insert(operands.end(), {states[0], states[1], lr, step});
          auto &i = b.emit(stream, Kernel::AdamWUpdate, operands, {});
          AdamWAttrsT attrs;
          attrs.weight_decay = o.weightDecay;
          i.attrs.Set(attrs);
          return &i;
        } else {
          operands.push_back(lr);
          if (!states.empty())
            operands.push_back(states[0]);
          auto &i = b.emit(stream, Kernel::SgdUpdate, operands, {});
          SgdAttrsT attrs;
          attrs.momentum = o.momentum;
          attrs.weight_decay = o.weightDecay;
          i.attrs.Set(attrs);
          return &i;
        }
      };
      // Data parallel: the gradients of layer l are all-reduced on stream 1
      // between events 2l (computed) and 2l + 1 (reduced).
      auto allReduce = [&](size_t l, int dw, int db) {
        while (b.step->streams.size() < 2)
          b.step->streams.push_back(std::make_unique<StreamT>());
        b.step->streams[1]->kind = StreamKind::Communication;
        auto &i = b.emit(1, Kernel::AllReduce, {dw, db}, {});
        if (o.allReduceAttrs) {
          AllReduceAttrsT attrs;
          attrs.op = o.allReduceOp;
          i.attrs.Set(attrs);
        }
        i.wait_events.push_back(int(2 * l));
        i.signal_events.push_back(int(2 * l + 1));
        b.step->num_events = std::max(b.step->num_events, int(2 * l + 2));
      };

      // Backward through the layers, last first.
      std::vector<int> grads(params.size());
      for (size_t l = layers.size(); l-- > 0;) {
        int in = l == 0 ? x : activations[l - 1];
        int dw = b.arena("dw" + std::to_string(l + 1),
                         {layers[l].first, layers[l].second}, false);
        int db =
            b.arena("db" + std::to_string(l + 1), {layers[l].first}, false);
        auto &weights =
            b.emit(0, Kernel::LinearBackwardWeights, {in, dy}, {dw, db});
        grads[2 * l] = dw, grads[2 * l + 1] = db;
        if (parallel) {
          weights.signal_events.push_back(int(2 * l));
          allReduce(l, dw, db);
        }
        if (l == 0)
          break;
        int da = b.arena("da" + std::to_string(l), {layers[l].second}, true);
        auto &data =
            b.emit(0, Kernel::LinearBackwardData, {dy, params[2 * l]}, {da});
        bool split = !parallel && o.twoStreams && l + 1 == layers.size();
        if (split) {
          // The last layer's weights are read for the last time: its update
          // may run on another stream from here on.
          data.signal_events.push_back(0);
          b.step->num_events = 1;
        }
        int dh = b.arena("dh" + std::to_string(l), {layers[l].second}, true);
        b.emit(0, Kernel::ReluBackward, {activations[l - 1], da}, {dh});
        dy = dh;
      }
      if (parallel) {
        for (size_t p = 0; p < params.size(); ++p) {
          InstructionT *i = update(0, p, grads[p]);
          if (p % 2 == 0) // a layer's first update waits for its all-reduce
            i->wait_events.push_back(int(p + 1));
        }
      } else if (o.twoStreams && layers.size() > 1) {
        // Stream 1 waits for the event, then updates the last layer.
        size_t last = layers.size() - 1;
        update(1, 2 * last, grads[2 * last]);
        update(1, 2 * last + 1, grads[2 * last + 1]);
        b.step->streams[1]->instructions.front()->wait_events.push_back(0);
        for (size_t p = 0; p < 2 * last; ++p)
          update(0, p, grads[p]);
      } else {
        for (size_t p = 0; p < params.size(); ++p)
          update(0, p, grads[p]);
      }
      plan.steps.push_back(std::move(b.step));
    }

    // eval_step
    {
      StepBuilder b("eval_step", StepRole::Eval, shares[d], int(d));
      int x;
      std::vector<int> params, activations;
      forward(b, x, params, activations);
      plan.steps.push_back(std::move(b.step));
    }
  } // devices
  return plan;
}

std::vector<uint8_t> packPlan(const PlanT &plan) {
  flatbuffers::FlatBufferBuilder builder;
  // Every field written, Plan.checksum too, whatever the plan object says.
  builder.ForceDefaults(true);
  FinishPlanBuffer(builder, Plan::Pack(builder, &plan));
  std::vector<uint8_t> bytes(builder.GetBufferPointer(),
                             builder.GetBufferPointer() + builder.GetSize());
  sealPlan(bytes);
  return bytes;
}

bool writeFile(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  return static_cast<bool>(file);
}

Batch randomBatch(const MlpPlanOptions &o, int64_t rows, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> pixel(0.f, 1.f);
  Batch batch;
  batch.images.resize(rows * o.channels * o.height * o.width);
  for (float &p : batch.images)
    p = pixel(random);
  for (int64_t i = 0; i < rows; ++i)
    batch.labels.push_back(int32_t(random() % o.classes));
  return batch;
}

} // namespace dpc::plan::test
