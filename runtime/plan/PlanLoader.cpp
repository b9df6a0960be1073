//===- PlanLoader.cpp - reading and validating plan files -----------------===//
// size: to split (issue 26): reading, and each family of checks.

#include "runtime/plan/PlanLoader.h"
#include "runtime/abi/CheckedMath.h"
#include "runtime/abi/KernelLayouts.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/abi/SharedCast.h"
#include "runtime/io/FileRead.h"
#include "runtime/plan/PlanChecksum.h"
#include "runtime/plan/PlanVersion.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

namespace dpc::plan {

void LoadedPlan::fail(const std::string &message) const {
  throw PlanError(name + ": " + message);
}

std::vector<int> LoadedPlan::findReplicas(std::string_view stepName) const {
  std::vector<int> replicas;
  const auto *steps = root->steps();
  for (flatbuffers::uoffset_t i = 0; steps && i < steps->size(); ++i)
    if (steps->Get(i)->name() &&
        steps->Get(i)->name()->string_view() == stepName)
      replicas.push_back(static_cast<int>(i));
  std::stable_sort(replicas.begin(), replicas.end(), [&](int a, int b) {
    return steps->Get(a)->device() < steps->Get(b)->device();
  });
  return replicas;
}

int LoadedPlan::findStep(StepRole role) const {
  const auto *steps = root->steps();
  for (flatbuffers::uoffset_t i = 0; steps && i < steps->size(); ++i)
    if (steps->Get(i)->role() == role)
      return static_cast<int>(i);
  return -1;
}

std::shared_ptr<const LoadedPlan> LoadedPlan::load(const std::string &path) {
  // FlatBuffers cannot address more: a larger "plan" (a device file, say)
  // is refused before it fills the memory.
  std::vector<uint8_t> bytes;
  std::string error;
  if (!io::readFile(path, bytes, error, FLATBUFFERS_MAX_BUFFER_SIZE))
    throw PlanError(error);
  return fromBytes(std::move(bytes), path);
}

std::shared_ptr<const LoadedPlan>
LoadedPlan::fromBytes(std::vector<uint8_t> bytes, std::string name) {
  std::shared_ptr<LoadedPlan> plan(
      new LoadedPlan(std::move(bytes), std::move(name)));
  plan->validate();
  return plan;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

/// The end of `bytes` from `offset`, for a message: "offset + bytes", or a
/// note where the sum overflows int64 (a crafted plan).
static std::string formatEnd(int64_t offset, int64_t bytes) {
  std::optional<int64_t> end = checkedAdd(offset, bytes);
  return end ? std::to_string(*end)
             : std::to_string(offset) + " + " + std::to_string(bytes);
}

/// Walks a verified plan and checks what the schema cannot express.
class PlanValidator {
public:
  explicit PlanValidator(LoadedPlan &loaded)
      : loaded(loaded), plan(*loaded.root) {}

  void run() {
    checkAlignment();
    checkHeader();
    checkOnnxModel();
    checkPersistent();
    const auto *steps = plan.steps();
    if (!steps || steps->size() == 0)
      loaded.fail("the plan has no steps");
    // Steps of the same name on different devices are the replicas of
    // one data-parallel step.
    std::set<std::pair<std::string, int>> names;
    for (flatbuffers::uoffset_t s = 0; s < steps->size(); ++s) {
      const Step &step = *steps->Get(s);
      std::string stepName = step.name() ? step.name()->str() : "";
      if (stepName.empty())
        loaded.fail("step " + std::to_string(s) + " has no name");
      if (!names.insert({stepName, step.device()}).second)
        loaded.fail("two steps are named '" + stepName + "' on device " +
                    std::to_string(step.device()));
      checkStep(step);
    }
    checkReplicas();
    checkReplicaSignatures(loaded);
    checkRoles(loaded);
    checkSplit();
    checkDeviceBytes();
  }

private:
  /// FlatBuffers' verifier checks that a vector's length is aligned, not
  /// its elements: in a forged plan, a [long] whose length sits at 4 mod 8
  /// would be read misaligned (undefined behaviour). Checks every [long] of
  /// the schema before anything reads one; a [long] added to Plan.fbs must
  /// be added here.
  void checkAlignment() {
    auto check = [&](const flatbuffers::Vector<int64_t> *vector,
                     const char *what) {
      if (vector &&
          reinterpret_cast<uintptr_t>(vector->data()) % alignof(int64_t) != 0)
        loaded.fail(std::string("a [long] (") + what +
                    ") is not aligned to 8 bytes");
    };
    check(plan.sample_dims(), "sample_dims");
    check(plan.split(), "split");
    if (const auto *persistent = plan.persistent())
      for (const PersistentTensor *tensor : *persistent)
        check(tensor->dims(), "persistent tensor dims");
    if (!plan.steps())
      return;
    for (const Step *step : *plan.steps()) {
      if (const auto *tensors = step->tensors())
        for (const Tensor *tensor : *tensors)
          check(tensor->dims(), "tensor dims");
      if (!step->streams())
        continue;
      for (const Stream *stream : *step->streams()) {
        if (!stream->instructions())
          continue;
        for (const Instruction *instruction : *stream->instructions()) {
          if (const auto *conv = instruction->attrs_as_Conv2dAttrs()) {
            check(conv->stride(), "Conv2dAttrs.stride");
            check(conv->padding(), "Conv2dAttrs.padding");
            check(conv->dilation(), "Conv2dAttrs.dilation");
          } else if (const auto *pool = instruction->attrs_as_Pool2dAttrs()) {
            check(pool->kernel(), "Pool2dAttrs.kernel");
            check(pool->stride(), "Pool2dAttrs.stride");
            check(pool->padding(), "Pool2dAttrs.padding");
            check(pool->dilation(), "Pool2dAttrs.dilation");
          } else if (const auto *pad = instruction->attrs_as_PadAttrs()) {
            check(pad->low(), "PadAttrs.low");
            check(pad->high(), "PadAttrs.high");
          } else if (const auto *reduce = instruction->attrs_as_ReduceAttrs()) {
            check(reduce->dims(), "ReduceAttrs.dims");
          } else if (const auto *transpose =
                         instruction->attrs_as_TransposeAttrs()) {
            check(transpose->permutation(), "TransposeAttrs.permutation");
          }
        }
      }
    }
  }

  void checkHeader() {
    if (!plan.devices() || plan.devices()->size() == 0)
      loaded.fail("the plan names no devices");
    if (plan.devices()->size() > kMaxDevices)
      loaded.fail("the plan names " + std::to_string(plan.devices()->size()) +
                  " devices, more than " + std::to_string(kMaxDevices));
    for (const Device *device : *plan.devices())
      if (!device->name() || device->name()->size() == 0)
        loaded.fail("a device has no name");
    if (plan.grad_accum() < 1)
      loaded.fail("grad_accum " + std::to_string(plan.grad_accum()) +
                  " is not positive");
    if (plan.compiled_batch() < 0 || plan.num_classes() < 0)
      loaded.fail("negative compiled_batch or num_classes");
    if (plan.compiled_batch() > kMaxTensorElements ||
        plan.num_classes() > kMaxTensorElements)
      loaded.fail("compiled_batch " + std::to_string(plan.compiled_batch()) +
                  " or num_classes " + std::to_string(plan.num_classes()) +
                  " exceeds " + std::to_string(kMaxTensorElements));
    if (const auto *sample = plan.sample_dims()) {
      // [C, H, W] images, or [T] tokens.
      if (sample->size() < 1 || sample->size() > 3)
        loaded.fail("sample_dims must have 1 to 3 dims ([C, H, W] or [T]), "
                    "has " +
                    std::to_string(sample->size()));
      for (int64_t dim : *sample)
        if (dim <= 0)
          loaded.fail("sample_dims " + formatDims(toDims(sample)) +
                      " must be positive");
      if (getNumElements(toDims(sample)) < 0)
        loaded.fail("sample_dims " + formatDims(toDims(sample)) + " exceed " +
                    std::to_string(kMaxTensorElements) + " elements");
    }
  }

  /// The eval graph `dpc export` writes as ONNX: a graph unless a problem
  /// says why there is none, opsets in ONNX's range around the model's.
  void checkOnnxModel() {
    const OnnxModel *model = plan.onnx_model();
    if (!model)
      return;
    bool hasProblem = model->problem() && model->problem()->size() > 0;
    bool hasGraph = model->graph() && model->graph()->size() > 0;
    if (hasProblem == hasGraph)
      loaded.fail("onnx_model must hold either a graph or the problem that "
                  "prevents one");
    if (hasProblem)
      return;
    constexpr int64_t kMaxOnnxVersion = 1000;
    if (model->ir_version() < 3 || model->ir_version() > kMaxOnnxVersion ||
        model->min_opset() < 1 || model->min_opset() > model->opset() ||
        model->opset() > model->max_opset() ||
        model->max_opset() > kMaxOnnxVersion)
      loaded.fail(
          "onnx_model: IR version " + std::to_string(model->ir_version()) +
          " or opsets " + std::to_string(model->min_opset()) +
          " <= " + std::to_string(model->opset()) +
          " <= " + std::to_string(model->max_opset()) + " out of range");
    if (!model->forms())
      return;
    if (model->forms()->size() > size_t(kMaxOnnxVersion))
      loaded.fail("onnx_model: " + std::to_string(model->forms()->size()) +
                  " graph forms, more than " + std::to_string(kMaxOnnxVersion));
    for (const OnnxGraphForm *form : *model->forms())
      if (form->min_opset() < 1 || form->min_opset() > form->max_opset() ||
          form->max_opset() > kMaxOnnxVersion)
        loaded.fail("onnx_model: a graph form of opsets " +
                    std::to_string(form->min_opset()) + " to " +
                    std::to_string(form->max_opset()) + " out of range");
  }

  /// Dims of at most kMaxTensorRank entries and kMaxTensorElements
  /// elements; returns their byte size at `dtype`.
  int64_t checkDims(const std::string &where, DType dtype,
                    const flatbuffers::Vector<int64_t> *dimsVector) {
    if (getDTypeSize(dtype) == 0)
      loaded.fail(where + ": unknown dtype");
    size_t rank = dimsVector ? dimsVector->size() : 0;
    if (rank > kMaxTensorRank)
      loaded.fail(where + ": rank " + std::to_string(rank) + " exceeds " +
                  std::to_string(kMaxTensorRank));
    std::vector<int64_t> dims = toDims(dimsVector);
    int64_t bytes = getByteSize(dtype, dims);
    if (bytes < 0)
      loaded.fail(where + ": invalid dims " + formatDims(dims) +
                  " (negative, or more than " +
                  std::to_string(kMaxTensorElements) + " elements)");
    return bytes;
  }

  /// What the persistent tensors of one name say about sharding: whether
  /// they are shards, and of which whole.
  struct Shards {
    bool sharded = false;
    std::vector<int64_t> logicalDims;
    DType dtype = DType::F32;
  };

  /// A shard is a 1-D range within its whole, and every tensor of its name
  /// is a shard of the same whole (a checkpoint gathers them into it).
  void checkShard(const PersistentTensor &p, const std::string &where,
                  std::map<std::string, Shards> &shards) {
    bool sharded = p.logical_dims() != nullptr;
    std::vector<int64_t> logical =
        sharded ? toDims(p.logical_dims()) : std::vector<int64_t>();
    auto [known, first] = shards.try_emplace(
        p.name()->str(), Shards{sharded, logical, p.dtype()});
    if (!first && (known->second.sharded != sharded ||
                   known->second.logicalDims != logical ||
                   known->second.dtype != p.dtype()))
      loaded.fail(where + ": its name's other tensors are " +
                  (known->second.sharded
                       ? "shards of " + formatDims(known->second.logicalDims)
                       : std::string("whole copies")) +
                  " of " + EnumNameDType(known->second.dtype));
    if (!sharded)
      return;
    checkDims(where + "'s logical dims", p.dtype(), p.logical_dims());
    int64_t whole = getNumElements(logical);
    int64_t count = getNumElements(toDims(p.dims()));
    if ((p.dims() ? p.dims()->size() : 0) != 1 || p.shard_offset() < 0 ||
        p.shard_offset() > whole || count > whole - p.shard_offset())
      loaded.fail(where + ": shard " + formatDims(toDims(p.dims())) +
                  " at element " + std::to_string(p.shard_offset()) +
                  " is not a range of its whole " + formatDims(logical));
  }

  void checkPersistent() {
    const auto *persistent = plan.persistent();
    if (!persistent)
      return;
    // Each device holds its own copy of the training state.
    std::set<std::pair<std::string, int>> names;
    std::map<std::string, Shards> shards;
    for (flatbuffers::uoffset_t i = 0; i < persistent->size(); ++i) {
      const PersistentTensor &p = *persistent->Get(i);
      std::string where = "persistent tensor " + std::to_string(i);
      std::string name = p.name() ? p.name()->str() : "";
      if (name.empty())
        loaded.fail(where + " has no name");
      where += " ('" + name + "')";
      int numDevices = static_cast<int>(plan.devices()->size());
      if (p.device() < 0 || p.device() >= numDevices)
        loaded.fail(where + ": device " + std::to_string(p.device()) +
                    " is out of range (the plan has " +
                    std::to_string(numDevices) + " devices)");
      if (!names.insert({name, p.device()}).second)
        loaded.fail(where + ": the name is used twice on device " +
                    std::to_string(p.device()));
      int64_t bytes = checkDims(where, p.dtype(), p.dims());
      checkShard(p, where, shards);
      switch (p.init()) {
      case InitKind::Data: {
        int64_t have = p.data() ? p.data()->size() : 0;
        if (have != bytes)
          loaded.fail(where + ": initial data has " + std::to_string(have) +
                      " bytes, its dims need " + std::to_string(bytes));
        break;
      }
      case InitKind::Zeros:
      case InitKind::Ones:
        break;
      default:
        loaded.fail(where + ": unknown init kind");
      }
    }
  }

  void checkStep(const Step &step) {
    std::string where = "step '" + step.name()->str() + "'";
    const auto *devices = plan.devices();
    if (step.device() < 0 || uint32_t(step.device()) >= devices->size())
      loaded.fail(where + ": device " + std::to_string(step.device()) +
                  " is out of range (the plan has " +
                  std::to_string(devices->size()) + " devices)");
    checkStepSizes(step, where);

    const auto *tensors = step.tensors();
    int numTensors = tensors ? static_cast<int>(tensors->size()) : 0;
    // -1 until a batch tensor is seen. A replica's share may be 0 rows (a
    // device given none by --split): it still holds the state and takes
    // part in the collectives.
    int64_t maxBatch = -1;
    for (int t = 0; t < numTensors; ++t)
      maxBatch = checkTensor(step, where, t, maxBatch);
    maxBatch = std::max<int64_t>(maxBatch, 0);
    checkAliases(step, where);
    loaded.maxBatch.push_back(maxBatch);

    auto checkBindings = [&](const auto *bindings, const char *kind,
                             bool inputs) {
      if (!bindings)
        return;
      std::set<std::string> names;
      for (const Binding *binding : *bindings) {
        std::string name = binding->name() ? binding->name()->str() : "";
        if (name.empty())
          loaded.fail(where + ": an " + kind + " binding has no name");
        if (!names.insert(name).second)
          loaded.fail(where + ": " + kind + " '" + name + "' is bound twice");
        int t = binding->tensor();
        if (t < 0 || t >= numTensors)
          loaded.fail(where + ": " + kind + " '" + name + "' is tensor " +
                      std::to_string(t) + ", but the step has " +
                      std::to_string(numTensors) + " tensors");
        if (inputs && tensors->Get(t)->storage() != Storage::Input)
          loaded.fail(where + ": input '" + name + "' is tensor " +
                      std::to_string(t) + ", which is not an Input tensor");
        // The executor splits and joins bindings by rows of dim 0.
        const Tensor &tensor = *tensors->Get(t);
        if (tensor.batch_dim() &&
            (tensor.batch_axis() != 0 || tensor.batch_scale() != 1))
          loaded.fail(where + ": " + kind + " '" + name +
                      "' holds the batch in dim " +
                      std::to_string(tensor.batch_axis()) + " (scale " +
                      std::to_string(tensor.batch_scale()) +
                      "); a binding holds it in dim 0");
      }
    };
    checkBindings(step.inputs(), "input", true);
    checkBindings(step.outputs(), "output", false);
    checkImagesInput(step, where, maxBatch);

    checkInstructions(step, where, numTensors, maxBatch);
  }

  /// The step's sizes that are plain numbers: within range, and no more
  /// streams or events than are of use (each is allocated at run time).
  void checkStepSizes(const Step &step, const std::string &where) {
    auto checkBytes = [&](int64_t value, const char *field) {
      if (value < 0 || value > kMaxDeviceBytes)
        loaded.fail(where + ": " + field + " " + std::to_string(value) +
                    " is not in [0, " + std::to_string(kMaxDeviceBytes) + "]");
    };
    checkBytes(step.arena_bytes(), "arena_bytes");
    checkBytes(step.activation_bytes(), "activation_bytes");
    checkBytes(step.gradient_bytes(), "gradient_bytes");
    if (step.remat_flops() < 0)
      loaded.fail(where + ": negative remat_flops");
    if (const auto *live = step.live_at_peak())
      for (const LiveTensor *tensor : *live)
        checkBytes(tensor->bytes(), "live_at_peak bytes");
    size_t numStreams = step.streams() ? step.streams()->size() : 0;
    if (numStreams > kMaxStreams)
      loaded.fail(where + ": " + std::to_string(numStreams) +
                  " streams, more than " + std::to_string(kMaxStreams));
    if (step.num_events() < 0)
      loaded.fail(where + ": negative num_events");
    // Codegen numbers a step's events densely, each waited for or
    // signalled at least once: more events than mentions is a forgery.
    int64_t mentions = countEventMentions(step);
    if (step.num_events() > mentions)
      loaded.fail(where + ": num_events " + std::to_string(step.num_events()) +
                  " exceeds the " + std::to_string(mentions) +
                  " waits and signals of its instructions");
    if (step.num_events() > kMaxEvents)
      loaded.fail(where + ": " + std::to_string(step.num_events()) +
                  " events, more than " + std::to_string(kMaxEvents));
  }

  static int64_t countEventMentions(const Step &step) {
    int64_t mentions = 0;
    for (flatbuffers::uoffset_t s = 0;
         step.streams() && s < step.streams()->size(); ++s)
      if (const auto *instructions = step.streams()->Get(s)->instructions())
        for (const Instruction *instruction : *instructions)
          for (const auto *events :
               {instruction->wait_events(), instruction->signal_events()})
            mentions += events ? events->size() : 0;
    return mentions;
  }

  /// The one data input of a step (the images of an image model) is
  /// [batch, ...sample_dims], which the data set is checked against.
  void checkImagesInput(const Step &step, const std::string &where,
                        int64_t maxBatch) {
    const auto *sample = plan.sample_dims();
    if (!sample || !step.inputs())
      return;
    const Binding *data = nullptr;
    for (const Binding *binding : *step.inputs())
      if (binding->role() == InputRole::Data) {
        if (data)
          return; // several: the model's own names and shapes
        data = binding;
      }
    if (!data)
      return;
    const Tensor &images = *step.tensors()->Get(data->tensor());
    std::vector<int64_t> expected = toDims(sample);
    expected.insert(expected.begin(), maxBatch);
    std::vector<int64_t> dims = toDims(images.dims());
    if (!images.batch_dim() || dims != expected)
      loaded.fail(where + ": input '" + data->name()->str() + "' " +
                  formatDims(dims) + " disagrees with sample_dims " +
                  formatDims(toDims(sample)) + " (expected " +
                  formatDims(expected) + " with a batch dim)");
  }

  /// A blocked layout is for an arena tensor of a shape it fits, which no
  /// other tensor views under other dims.
  void checkLayout(const Tensor &tensor, const std::vector<int64_t> &dims,
                   const std::string &where) {
    Layout layout = tensor.layout();
    if (layout == Layout::Plain)
      return;
    std::string name = getLayoutName(layout);
    if (layout != Layout::NChw16c)
      loaded.fail(where + ": unknown layout " + name);
    if (!canHaveLayout(layout, tensor.dtype(), dims))
      loaded.fail(where + ": layout " + name +
                  " needs an F32 [n, c, h, w] "
                  "tensor with c a multiple of 16, not " +
                  EnumNameDType(tensor.dtype()) + " " + formatDims(dims));
    if (tensor.storage() != Storage::Arena)
      loaded.fail(where + ": layout " + name + " is for arena tensors only");
    if (tensor.batch_dim() &&
        (tensor.batch_axis() != 0 || tensor.batch_scale() != 1))
      loaded.fail(where + ": layout " + name + " needs the batch as dim 0");
  }

  /// Checks tensor `t`; returns the step's compiled batch seen so far (-1
  /// for none).
  int64_t checkTensor(const Step &step, const std::string &stepWhere, int t,
                      int64_t maxBatch) {
    const Tensor &tensor = *step.tensors()->Get(t);
    std::string where = stepWhere + ": tensor " + std::to_string(t);
    if (tensor.name())
      where += " ('" + tensor.name()->str() + "')";
    int64_t bytes = checkDims(where, tensor.dtype(), tensor.dims());
    int64_t size = getDTypeSize(tensor.dtype());
    int64_t count = bytes / size;
    std::vector<int64_t> dims = toDims(tensor.dims());
    checkLayout(tensor, dims, where);
    if (tensor.batch_dim()) {
      int64_t axis = tensor.batch_axis(), scale = tensor.batch_scale();
      if (axis < 0 || axis >= static_cast<int64_t>(dims.size()))
        loaded.fail(where + ": batch axis " + std::to_string(axis) +
                    " is not a dim of " + formatDims(dims));
      if (scale < 1 || dims[axis] % scale != 0)
        loaded.fail(where + ": dim " + std::to_string(axis) + " of " +
                    formatDims(dims) + " is not " + std::to_string(scale) +
                    " times a batch");
      int64_t batch = dims[axis] / scale;
      if (maxBatch >= 0 && batch != maxBatch)
        loaded.fail(where + ": batch " + std::to_string(batch) +
                    " differs from the step's other batch tensors (" +
                    std::to_string(maxBatch) + ")");
      maxBatch = batch;
    } else if (tensor.batch_axis() != 0 || tensor.batch_scale() != 1) {
      loaded.fail(where + ": a batch axis or scale without a batch dim");
    }
    switch (tensor.storage()) {
    case Storage::Arena:
      if (tensor.offset() < 0 || tensor.offset() % size != 0 ||
          tensor.offset() > step.arena_bytes() ||
          bytes > step.arena_bytes() - tensor.offset())
        loaded.fail(
            where + ": bytes [" + std::to_string(tensor.offset()) + ", " +
            formatEnd(tensor.offset(), bytes) + ") do not fit the arena of " +
            std::to_string(step.arena_bytes()) + " bytes (or are misaligned)");
      break;
    case Storage::Persistent: {
      const auto *persistent = plan.persistent();
      int p = tensor.persistent();
      int numPersistent = persistent ? static_cast<int>(persistent->size()) : 0;
      if (p < 0 || p >= numPersistent)
        loaded.fail(where + ": persistent index " + std::to_string(p) +
                    " is out of range (the plan has " +
                    std::to_string(numPersistent) + " persistent tensors)");
      const PersistentTensor &state = *persistent->Get(p);
      if (state.dtype() != tensor.dtype() ||
          getNumElements(toDims(state.dims())) != count)
        loaded.fail(where + ": " + EnumNameDType(tensor.dtype()) + " " +
                    formatDims(dims) + " does not match persistent tensor '" +
                    state.name()->str() + "' " + EnumNameDType(state.dtype()) +
                    " " + formatDims(toDims(state.dims())));
      if (tensor.batch_dim())
        loaded.fail(where + ": a persistent tensor has no batch dim");
      if (state.device() != step.device())
        loaded.fail(where + ": persistent tensor '" + state.name()->str() +
                    "' is on device " + std::to_string(state.device()) +
                    ", the step on device " + std::to_string(step.device()));
      break;
    }
    case Storage::Input:
      break;
    case Storage::Alias: {
      int a = tensor.alias();
      int numTensors = static_cast<int>(step.tensors()->size());
      if (a < 0 || a >= numTensors || a == t)
        loaded.fail(where + ": alias " + std::to_string(a) +
                    " is not another tensor of the step (it has " +
                    std::to_string(numTensors) + ")");
      break;
    }
    default:
      loaded.fail(where + ": unknown storage");
    }
    return maxBatch;
  }

  /// Every alias must reach a real tensor without a cycle and fit in it.
  /// Each tensor's base is resolved once, so a long chain costs linear time.
  void checkAliases(const Step &step, const std::string &stepWhere) {
    const auto *tensors = step.tensors();
    size_t numTensors = tensors ? tensors->size() : 0;
    constexpr int kUnresolved = -1, kOnPath = -2;
    std::vector<int> base(numTensors, kUnresolved);
    std::vector<int64_t> offset(numTensors, 0);
    std::vector<int> path;
    for (size_t t = 0; t < numTensors; ++t) {
      // Walk to a real tensor or to one already resolved.
      int at = static_cast<int>(t);
      while (base[at] == kUnresolved &&
             tensors->Get(at)->storage() == Storage::Alias) {
        base[at] = kOnPath;
        path.push_back(at);
        at = tensors->Get(at)->alias();
      }
      if (base[at] == kOnPath)
        loaded.fail(stepWhere + ": tensor " + std::to_string(t) +
                    ": its aliases form a cycle");
      int target = base[at] == kUnresolved ? at : base[at];
      base[at] = target;
      // From the end of the chain back: each alias starts at its own
      // offset in what it views.
      for (auto p = path.rbegin(); p != path.rend(); ++p) {
        base[*p] = target;
        const Tensor &alias = *tensors->Get(*p);
        std::optional<int64_t> start =
            checkedAdd(offset[alias.alias()], alias.offset());
        if (alias.offset() < 0 || !start)
          loaded.fail(stepWhere + ": tensor " + std::to_string(*p) +
                      ": alias offset " + std::to_string(alias.offset()));
        offset[*p] = *start;
      }
      path.clear();
      checkAliasFits(step, stepWhere, static_cast<int>(t), target, offset[t]);
    }
    loaded.aliasBase.push_back(std::move(base));
    loaded.aliasOffset.push_back(std::move(offset));
  }

  void checkAliasFits(const Step &step, const std::string &stepWhere, int t,
                      int target, int64_t offset) {
    if (t == target)
      return;
    auto bytesOf = [](const Tensor &x) {
      return getByteSize(x.dtype(), toDims(x.dims()));
    };
    const Tensor &tensor = *step.tensors()->Get(t);
    const Tensor &base = *step.tensors()->Get(target);
    if (offset > bytesOf(base) || bytesOf(tensor) > bytesOf(base) - offset)
      loaded.fail(stepWhere + ": tensor " + std::to_string(t) + ": " +
                  std::to_string(bytesOf(tensor)) + " bytes at " +
                  std::to_string(offset) + " do not fit the " +
                  std::to_string(bytesOf(base)) + " bytes of tensor " +
                  std::to_string(target) + " it aliases");
    // A view reads plain elements: a blocked tensor has none to offer.
    if (base.layout() != Layout::Plain)
      loaded.fail(stepWhere + ": tensor " + std::to_string(t) +
                  ": aliases tensor " + std::to_string(target) + ", which is " +
                  getLayoutName(base.layout()));
  }

  void checkInstructions(const Step &step, const std::string &stepWhere,
                         int numTensors, int64_t maxBatch) {
    const auto *streams = step.streams();
    int numEvents = step.num_events();
    std::vector<int> signaller(numEvents, -1);
    std::vector<bool> waited(numEvents, false);
    for (flatbuffers::uoffset_t s = 0; streams && s < streams->size(); ++s) {
      const Stream &stream = *streams->Get(s);
      const auto *instructions = stream.instructions();
      // The tensor whose copy each cast slot of this stream holds so far.
      std::vector<int> castSlotTensor(kMaxCastSlots + 1, -1);
      for (flatbuffers::uoffset_t i = 0;
           instructions && i < instructions->size(); ++i) {
        const Instruction &instruction = *instructions->Get(i);
        std::string where = stepWhere + ", stream " + std::to_string(s) +
                            ", instruction " + std::to_string(i);
        const char *kernelName = EnumNameKernel(instruction.kernel());
        where += *kernelName ? std::string(" (") + kernelName + ")" : "";
        checkInstruction(step, instruction, where, numTensors, maxBatch);
        checkCastSlot(instruction, where, castSlotTensor);
        auto checkEvents = [&](const flatbuffers::Vector<int32_t> *events,
                               bool signal) {
          for (flatbuffers::uoffset_t k = 0; events && k < events->size();
               ++k) {
            int e = events->Get(k);
            if (e < 0 || e >= numEvents)
              loaded.fail(where + ": event " + std::to_string(e) +
                          " is out of range (the step has " +
                          std::to_string(numEvents) + " events)");
            if (!signal) {
              waited[e] = true;
              continue;
            }
            if (signaller[e] != -1)
              loaded.fail(where + ": event " + std::to_string(e) +
                          " is signalled twice in one step");
            signaller[e] = static_cast<int>(s);
          }
        };
        checkEvents(instruction.wait_events(), false);
        checkEvents(instruction.signal_events(), true);
      }
    }
    for (int e = 0; e < numEvents; ++e)
      if (waited[e] && signaller[e] == -1)
        loaded.fail(stepWhere + ": event " + std::to_string(e) +
                    " is waited for but never signalled");
    loaded.enqueueOrder.push_back(orderForEnqueue(step, stepWhere));
    checkDataflow(step, stepWhere, loaded.enqueueOrder.back());
  }

  /// No instruction reads an arena tensor (or a view of one) that no
  /// instruction ordered before it -- earlier on its stream, or through
  /// events -- has written, and every output is written or bound. Bound
  /// inputs and the training state hold values before the step starts; an
  /// Input tensor no binding names holds none (nothing fills it).
  ///
  /// "Ordered before" is tracked with vector clocks: a stream's clock holds,
  /// per stream, the index of the last instruction known to have run, and
  /// an event carries its signaller's clock to the streams that wait. A
  /// write on stream S at index I precedes an instruction whose clock has
  /// clock[S] >= I.
  // size: to shorten (issue 26), with the split of this file.
  void checkDataflow(const Step &step, const std::string &stepWhere,
                     const std::vector<std::pair<int, int>> &order) {
    const auto *tensors = step.tensors();
    const auto *streams = step.streams();
    size_t numTensors = tensors ? tensors->size() : 0;
    size_t numStreams = streams ? streams->size() : 0;
    const std::vector<int> &base = loaded.aliasBase.back();
    // An Input tensor holds a value only when a binding fills it.
    std::vector<bool> bound(numTensors, false);
    if (const auto *inputs = step.inputs())
      for (const Binding *input : *inputs)
        bound[input->tensor()] = true;
    auto isUnboundInput = [&](int t) {
      return tensors->Get(base[t])->storage() == Storage::Input &&
             !bound[base[t]];
    };
    auto startsWritten = [&](int t) {
      return tensors->Get(base[t])->storage() != Storage::Arena &&
             !isUnboundInput(t);
    };
    // The first write of each tensor (by base) on the stream of its first
    // write, and on any other stream.
    std::vector<std::pair<int32_t, int32_t>> firstWrite(numTensors, {-1, -1});
    std::map<int, std::vector<std::pair<int32_t, int32_t>>> otherWrites;
    std::vector<std::vector<int32_t>> streamClock(
        numStreams, std::vector<int32_t>(numStreams, -1));
    std::vector<int32_t> eventClock(size_t(step.num_events()) * numStreams, -1);
    auto precedes = [&](std::pair<int32_t, int32_t> write,
                        const std::vector<int32_t> &clock) {
      return write.first >= 0 && clock[write.first] >= write.second;
    };
    auto isWritten = [&](int t, const std::vector<int32_t> &clock) {
      if (startsWritten(t) || precedes(firstWrite[base[t]], clock))
        return true;
      auto other = otherWrites.find(base[t]);
      if (other == otherWrites.end())
        return false;
      for (auto write : other->second)
        if (precedes(write, clock))
          return true;
      return false;
    };
    auto recordWrite = [&](int t, int32_t stream, int32_t index) {
      auto &first = firstWrite[base[t]];
      if (first.first < 0) {
        first = {stream, index};
        return;
      }
      if (first.first == stream)
        return;
      auto &others = otherWrites[base[t]];
      for (auto &write : others)
        if (write.first == stream)
          return;
      others.push_back({stream, index});
    };
    // Not a structured binding: the lambda below captures s and i, which
    // C++17 (and clang before 16) does not allow of bindings.
    for (const std::pair<int, int> &entry : order) {
      int s = entry.first, i = entry.second;
      const Instruction &instruction = *streams->Get(s)->instructions()->Get(i);
      std::vector<int32_t> &clock = streamClock[s];
      if (const auto *waits = instruction.wait_events())
        for (int e : *waits)
          for (size_t k = 0; k < numStreams; ++k)
            clock[k] = std::max(clock[k], eventClock[e * numStreams + k]);
      clock[s] = i;
      Kernel kernel = instruction.kernel();
      auto checkRead = [&](int t, const std::string &what) {
        if (t < 0 || isWritten(t, clock))
          return;
        const Tensor &tensor = *tensors->Get(t);
        loaded.fail(stepWhere + ", stream " + std::to_string(s) +
                    ", instruction " + std::to_string(i) + " (" +
                    EnumNameKernel(kernel) + "): " + what + " reads tensor " +
                    std::to_string(t) +
                    (tensor.name() ? " ('" + tensor.name()->str() + "')" : "") +
                    (isUnboundInput(t) ? ", an input that no binding fills"
                                       : " before any instruction writes it"));
      };
      if (const auto *operands = instruction.operands())
        for (flatbuffers::uoffset_t k = 0; k < operands->size(); ++k)
          checkRead(operands->Get(k), describeOperand(kernel, k));
      if (const auto *results = instruction.results())
        for (flatbuffers::uoffset_t k = 0; k < results->size(); ++k) {
          // y += x reads y.
          if (kernel == Kernel::Accumulate)
            checkRead(results->Get(k), describeResult(kernel, k));
          if (results->Get(k) >= 0)
            recordWrite(results->Get(k), s, i);
        }
      // In-place updates write what they read; nothing to record for
      // tensors that start written.
      if (const auto *signals = instruction.signal_events())
        for (int e : *signals)
          std::copy(clock.begin(), clock.end(),
                    eventClock.begin() + size_t(e) * numStreams);
    }
    // Outputs are read by the caller after every stream has finished.
    std::vector<int32_t> end(numStreams, INT32_MAX);
    if (const auto *outputs = step.outputs())
      for (const Binding *output : *outputs)
        if (!isWritten(output->tensor(), end))
          loaded.fail(stepWhere + ": output '" + output->name()->str() +
                      "' (tensor " + std::to_string(output->tensor()) +
                      ") is never written by an instruction");
  }

  /// A cast slot (SharedCast.h) is named only by a bf16 call that can
  /// share an operand's cast, and read only after this stream's latest
  /// call that filled the slot did so from the same tensor.
  void checkCastSlot(const Instruction &instruction, const std::string &where,
                     std::vector<int> &castSlotTensor) {
    int slot = instruction.cast_slot();
    if (slot == 0 && !instruction.cast_reuse())
      return;
    if (slot < 1 || slot > kMaxCastSlots)
      loaded.fail(where + ": cast slot " + std::to_string(slot) +
                  " is out of range [1, " + std::to_string(kMaxCastSlots) +
                  "]");
    int operand = getSharedCastOperand(instruction.kernel());
    if (operand < 0 || instruction.precision() != DType::BF16 ||
        !instruction.operands() ||
        static_cast<int>(instruction.operands()->size()) <= operand)
      loaded.fail(where + ": cast slot " + std::to_string(slot) +
                  " on a call that does not share an operand's bf16 cast");
    int tensor = instruction.operands()->Get(operand);
    if (!instruction.cast_reuse())
      castSlotTensor[slot] = tensor;
    else if (castSlotTensor[slot] != tensor)
      loaded.fail(where + ": reads cast slot " + std::to_string(slot) +
                  ", which the stream's latest call to fill it filled "
                  "with another tensor");
  }

  void checkInstruction(const Step &step, const Instruction &instruction,
                        const std::string &where, int numTensors,
                        int64_t maxBatch) {
    const KernelSignature *signature = getKernelSignature(instruction.kernel());
    if (!signature)
      loaded.fail(where + ": kernel " +
                  std::to_string(static_cast<int>(instruction.kernel())) +
                  " is not supported by this runtime");
    KernelCall call;
    call.kernel = instruction.kernel();
    call.instruction = &instruction;
    call.batch = maxBatch;
    auto bind = [&](const flatbuffers::Vector<int32_t> *indices,
                    const char *role, size_t lo, size_t hi,
                    bool (KernelSignature::*isOptional)(size_t) const,
                    std::vector<TensorArg> &args) {
      size_t count = indices ? indices->size() : 0;
      if (count < lo || count > hi)
        loaded.fail(where + ": has " + std::to_string(count) + " " + role +
                    "s, expected " +
                    (lo == hi
                         ? std::to_string(lo)
                         : std::to_string(lo) + " to " + std::to_string(hi)));
      for (size_t k = 0; k < count; ++k) {
        int t = indices->Get(k);
        TensorArg arg;
        if (t == -1 && (signature->*isOptional)(k)) {
          args.push_back(arg);
          continue;
        }
        if (t < 0 || t >= numTensors)
          loaded.fail(where + ": " + role + " " + std::to_string(k) +
                      " is tensor " + std::to_string(t) +
                      ", but the step has " + std::to_string(numTensors) +
                      " tensors");
        const Tensor &tensor = *step.tensors()->Get(t);
        arg.present = true;
        arg.dtype = tensor.dtype();
        arg.dims = toDims(tensor.dims());
        arg.layout = tensor.layout();
        args.push_back(arg);
      }
    };
    bind(instruction.operands(), "operand", signature->minOperands,
         signature->maxOperands, &KernelSignature::isOptionalOperand,
         call.operands);
    bind(instruction.results(), "result", signature->minResults,
         signature->maxResults, &KernelSignature::isOptionalResult,
         call.results);
    if (int w = instruction.workspace(); w != -1) {
      if (!signature->takesWorkspace())
        loaded.fail(where + ": " + EnumNameKernel(instruction.kernel()) +
                    " takes no workspace");
      if (w < 0 || w >= numTensors)
        loaded.fail(where + ": workspace is tensor " + std::to_string(w) +
                    ", but the step has " + std::to_string(numTensors) +
                    " tensors");
      const Tensor &tensor = *step.tensors()->Get(w);
      std::vector<int64_t> dims = toDims(tensor.dims());
      if (tensor.dtype() != DType::U8 || dims.size() != 1 || tensor.batch_dim())
        loaded.fail(where + ": workspace tensor " + std::to_string(w) +
                    " is not a 1-D U8 buffer of a fixed size");
      call.workspace = {true, nullptr, DType::U8, dims};
    }
    KernelAttrs attrs = instruction.attrs_type();
    if (attrs != signature->attrs &&
        (attrs != KernelAttrs::NONE || signature->attrsRequired()))
      loaded.fail(where + ": has " +
                  (attrs == KernelAttrs::NONE
                       ? std::string("no attributes")
                       : std::string(EnumNameKernelAttrs(attrs))) +
                  ", expected " + EnumNameKernelAttrs(signature->attrs));
    try {
      checkKernelCall(call);
    } catch (const ShapeError &error) {
      loaded.fail(where + ": " + error.what());
    }
    if (std::string problem = checkCallLayouts(call); !problem.empty())
      loaded.fail(where + ": " + problem);
    // Replicas run on different numbers of rows: only tensors without a
    // batch dim have the same size everywhere.
    if (isCollectiveKernel(instruction.kernel()))
      for (int t : *instruction.operands())
        if (step.tensors()->Get(t)->batch_dim())
          loaded.fail(where + ": operand tensor " + std::to_string(t) +
                      " has a batch dim; replicas cannot reduce it");
  }

  static int countCollectives(const Step &step) {
    int count = 0;
    for (flatbuffers::uoffset_t s = 0;
         step.streams() && s < step.streams()->size(); ++s)
      if (const auto *instructions = step.streams()->Get(s)->instructions())
        for (const Instruction *instruction : *instructions)
          count += isCollectiveKernel(instruction->kernel());
    return count;
  }

  /// Replicas of a step must issue the same collectives, and a step with
  /// collectives needs a replica on every device (they all take part).
  void checkReplicas() {
    std::map<std::string, std::vector<const Step *>> replicas;
    for (const Step *step : *plan.steps())
      replicas[step->name()->str()].push_back(step);
    size_t numDevices = plan.devices()->size();
    for (const auto &[name, steps] : replicas) {
      int collectives = countCollectives(*steps[0]);
      for (const Step *step : steps)
        if (countCollectives(*step) != collectives)
          loaded.fail("step '" + name + "': the replica on device " +
                      std::to_string(step->device()) + " has " +
                      std::to_string(countCollectives(*step)) +
                      " collectives, the one on device " +
                      std::to_string(steps[0]->device()) + " has " +
                      std::to_string(collectives));
      if (collectives > 0 && steps.size() != numDevices)
        loaded.fail("step '" + name + "' has collectives but replicas on " +
                    std::to_string(steps.size()) + " of the " +
                    std::to_string(numDevices) + " devices");
    }
  }

  void checkSplit() {
    const auto *split = plan.split();
    if (!split || split->size() == 0)
      return;
    if (split->size() != plan.devices()->size())
      loaded.fail("split " + formatDims(toDims(split)) + " has " +
                  std::to_string(split->size()) + " entries for " +
                  std::to_string(plan.devices()->size()) + " devices");
    int64_t sum = 0;
    for (int64_t share : *split) {
      if (share < 0)
        loaded.fail("split " + formatDims(toDims(split)) +
                    " has a negative share");
      sum += share;
    }
    // With gradient accumulation the shares are those of a micro-batch.
    if (plan.compiled_batch() > 0 &&
        sum * plan.grad_accum() != plan.compiled_batch())
      loaded.fail("split " + formatDims(toDims(split)) + " sums to " +
                  std::to_string(sum) + ", not the compiled batch " +
                  std::to_string(plan.compiled_batch()) +
                  (plan.grad_accum() > 1
                       ? " / " + std::to_string(plan.grad_accum())
                       : std::string()));
  }

  /// What each device holds at once -- its training state, its largest
  /// arena and every step's inputs -- within kMaxDeviceBytes, so that no
  /// later sum overflows and no absurd plan reaches an allocation.
  void checkDeviceBytes() {
    size_t numDevices = plan.devices()->size();
    std::vector<int64_t> state(numDevices, 0), arena(numDevices, 0),
        inputs(numDevices, 0);
    auto add = [&](std::vector<int64_t> &total, int device, int64_t bytes) {
      std::optional<int64_t> sum = checkedAdd(total[device], bytes);
      total[device] = sum ? *sum : kMaxDeviceBytes + 1;
      if (total[device] > kMaxDeviceBytes)
        failDeviceBytes(device);
    };
    if (const auto *persistent = plan.persistent())
      for (const PersistentTensor *p : *persistent)
        add(state, p->device(), getByteSize(p->dtype(), toDims(p->dims())));
    for (const Step *step : *plan.steps()) {
      arena[step->device()] =
          std::max(arena[step->device()], step->arena_bytes());
      if (const auto *bindings = step->inputs())
        for (const Binding *binding : *bindings) {
          const Tensor &t = *step->tensors()->Get(binding->tensor());
          add(inputs, step->device(), getByteSize(t.dtype(), toDims(t.dims())));
        }
    }
    for (size_t d = 0; d < numDevices; ++d) {
      add(state, d, arena[d]);
      add(state, d, inputs[d]);
    }
  }

  [[noreturn]] void failDeviceBytes(int device) {
    loaded.fail("device " + plan.devices()->Get(device)->name()->str() +
                " would need more than " +
                std::to_string(kMaxDeviceBytes >> 40) +
                " TiB (training state, arena and inputs)");
  }

  /// Round-robin over the streams, taking an instruction once every event
  /// it waits for has its signal taken; stuck means a cycle.
  std::vector<std::pair<int, int>> orderForEnqueue(const Step &step,
                                                   const std::string &where) {
    std::vector<std::pair<int, int>> order;
    const auto *streams = step.streams();
    size_t numStreams = streams ? streams->size() : 0;
    std::vector<size_t> next(numStreams, 0);
    std::vector<bool> signalled(step.num_events(), false);
    auto size = [&](size_t s) {
      const auto *instructions = streams->Get(s)->instructions();
      return instructions ? instructions->size() : 0;
    };
    while (true) {
      bool progress = false, done = true;
      for (size_t s = 0; s < numStreams; ++s) {
        for (; next[s] < size(s); ++next[s]) {
          const Instruction &instruction =
              *streams->Get(s)->instructions()->Get(next[s]);
          bool ready = true;
          if (const auto *waits = instruction.wait_events())
            for (int e : *waits)
              ready = ready && signalled[e];
          if (!ready)
            break;
          if (const auto *signals = instruction.signal_events())
            for (int e : *signals)
              signalled[e] = true;
          order.emplace_back(static_cast<int>(s), static_cast<int>(next[s]));
          progress = true;
        }
        done = done && next[s] == size(s);
      }
      if (done)
        return order;
      if (!progress)
        break;
    }
    for (size_t s = 0; s < numStreams; ++s)
      if (next[s] < size(s))
        loaded.fail(where + ": stream " + std::to_string(s) + " instruction " +
                    std::to_string(next[s]) +
                    " waits for an event that can never be signalled "
                    "(the streams deadlock)");
    return order;
  }

  LoadedPlan &loaded;
  const Plan &plan;
};

void LoadedPlan::validate() {
  const uint8_t *data = bytes.data();
  size_t size = bytes.size();
  if (size < 8 || !PlanBufferHasIdentifier(data))
    fail("not a dpc plan (no \"DPCP\" file identifier)");

  // Read the version before verifying the whole buffer, so that a plan of
  // another version is reported as such rather than as corrupted. `version`
  // is the first field of Plan and must stay so.
  flatbuffers::Verifier headerVerifier(data, size);
  flatbuffers::uoffset_t rootOffset =
      flatbuffers::ReadScalar<flatbuffers::uoffset_t>(data);
  if (rootOffset < 8 || rootOffset > size - 4)
    fail("corrupted plan (verification failed)");
  const auto *table =
      reinterpret_cast<const flatbuffers::Table *>(data + rootOffset);
  if (!table->VerifyTableStart(headerVerifier) ||
      !table->VerifyField<uint32_t>(headerVerifier, Plan::VT_VERSION, 4))
    fail("corrupted plan (verification failed)");
  uint32_t version = table->GetField<uint32_t>(Plan::VT_VERSION, 0);
  if (version != kPlanVersion)
    fail("plan format version " + std::to_string(version) +
         ", this runtime reads version " + std::to_string(kPlanVersion) +
         "; recompile the model");

  flatbuffers::Verifier verifier(data, size);
  if (!VerifyPlanBuffer(verifier))
    fail("corrupted plan (verification failed)");
  std::optional<size_t> checksumAt = findPlanChecksum(data);
  if (!checksumAt)
    fail("the plan carries no checksum");
  uint64_t expected = flatbuffers::ReadScalar<uint64_t>(data + *checksumAt);
  if (computePlanChecksum(data, size, *checksumAt) != expected)
    fail("corrupted plan (checksum mismatch: its contents changed since it "
         "was written)");
  root = GetPlan(data);
  PlanValidator(*this).run();
}

} // namespace dpc::plan
