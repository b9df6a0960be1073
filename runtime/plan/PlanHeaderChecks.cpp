//===- PlanHeaderChecks.cpp - the plan header, ONNX model and state
//---------===//
//
// The checks of the plan as a whole before its steps: the alignment of
// every [long], the header, the embedded ONNX model, and the persistent
// tensors (shards included).
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanValidator.h"

namespace dpc::plan {

void PlanValidator::checkAlignment() {
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

void PlanValidator::checkHeader() {
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

void PlanValidator::checkOnnxModel() {
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
    loaded.fail("onnx_model: IR version " +
                std::to_string(model->ir_version()) + " or opsets " +
                std::to_string(model->min_opset()) +
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

int64_t
PlanValidator::checkDims(const std::string &where, DType dtype,
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

void PlanValidator::checkShard(const PersistentTensor &p,
                               const std::string &where,
                               std::map<std::string, Shards> &shards) {
  bool sharded = p.logical_dims() != nullptr;
  std::vector<int64_t> logical =
      sharded ? toDims(p.logical_dims()) : std::vector<int64_t>();
  auto [known, first] =
      shards.try_emplace(p.name()->str(), Shards{sharded, logical, p.dtype()});
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

void PlanValidator::checkPersistent() {
  const auto *persistent = plan.persistent();
  if (!persistent)
    return;
  // Each device holds its own copy of the training state.
  std::set<std::pair<std::string, int>> names;
  std::map<std::string, Shards> shards;
  // The whole tensors with data, by name, and the copies that start as
  // them.
  std::map<std::string, const PersistentTensor *> withData;
  std::vector<std::pair<const PersistentTensor *, std::string>> copies;
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
    case InitKind::SameAsCopy:
      copies.push_back({&p, where});
      break;
    case InitKind::Zeros:
    case InitKind::Ones:
      break;
    default:
      loaded.fail(where + ": unknown init kind");
    }
    if (p.init() == InitKind::Data && !p.logical_dims())
      withData.emplace(name, &p);
  }
  for (auto [copy, where] : copies) {
    auto it = withData.find(copy->name()->str());
    if (it == withData.end() || copy->logical_dims() ||
        toDims(it->second->dims()) != toDims(copy->dims()) ||
        it->second->dtype() != copy->dtype())
      loaded.fail(where + ": starts as another device's copy, but no whole "
                          "tensor of its name, dims and dtype holds data");
  }
}

} // namespace dpc::plan
