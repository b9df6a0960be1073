//===- PlanStepChecks.cpp - a step's tensors and aliases
//--------------------===//
//
// The checks of each step: its sizes, inputs, tensors (dims, storage,
// layout, arena placement) and aliases.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanValidator.h"

namespace dpc::plan {

void PlanValidator::checkStep(const Step &step) {
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

void PlanValidator::checkStepSizes(const Step &step, const std::string &where) {
  auto checkBytes = [&](int64_t value, const char *field) {
    if (value < 0 || value > kMaxDeviceBytes)
      loaded.fail(where + ": " + field + " " + std::to_string(value) +
                  " is not in [0, " + std::to_string(kMaxDeviceBytes) + "]");
  };
  checkBytes(step.arena_bytes(), "arena_bytes");
  checkBytes(step.activation_bytes(), "activation_bytes");
  checkBytes(step.gradient_bytes(), "gradient_bytes");
  checkBytes(step.gathered_parameter_bytes(), "gathered_parameter_bytes");
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

int64_t PlanValidator::countEventMentions(const Step &step) {
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

void PlanValidator::checkImagesInput(const Step &step, const std::string &where,
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

void PlanValidator::checkLayout(const Tensor &tensor,
                                const std::vector<int64_t> &dims,
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

int64_t PlanValidator::checkTensor(const Step &step,
                                   const std::string &stepWhere, int t,
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

void PlanValidator::checkAliases(const Step &step,
                                 const std::string &stepWhere) {
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

void PlanValidator::checkAliasFits(const Step &step,
                                   const std::string &stepWhere, int t,
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

} // namespace dpc::plan
