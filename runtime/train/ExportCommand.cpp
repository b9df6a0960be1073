//===- ExportCommand.cpp - `dpc export` -----------------------------------===//

#include "runtime/train/ExportCommand.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/exec/TrainingState.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/CommandLine.h"
#include "runtime/train/DataOptions.h"
#include "runtime/train/NpyWriter.h"
#include "runtime/train/OnnxNormalize.h"
#include "runtime/train/OnnxWriter.h"
#include "runtime/train/Trainer.h"

#include <cstring>
#include <fstream>
#include <map>
#include <ostream>
#include <set>

namespace dpc::runtime {

using train::ExportedTensor;
using train::RunError;
using train::UsageError;

namespace {

enum class ExportFormat { Npz, Safetensors, Onnx };

struct ExportOptions {
  std::string planPath, checkpointDirectory, outputPath;
  ExportFormat format = ExportFormat::Npz;
  int64_t opset = 0; // 0: the model's
  bool help = false;
};

bool hasExtension(const std::string &path, const std::string &extension) {
  return path.size() >= extension.size() &&
         path.compare(path.size() - extension.size(), extension.size(),
                      extension) == 0;
}

ExportOptions parseExportOptions(const std::vector<std::string> &args) {
  ExportOptions options;
  std::string format; // empty: by the output's extension
  train::FlagParser parser;
  parser.addValue("--checkpoint", [&](const std::string &value) {
    options.checkpointDirectory = value;
  });
  parser.addValue(
      "-o", [&](const std::string &value) { options.outputPath = value; });
  parser.addValue("--format", [&](const std::string &value) {
    if (value != "npz" && value != "safetensors" && value != "onnx")
      throw UsageError("--format: expected onnx, npz or safetensors, got '" +
                       value + "'");
    format = value;
  });
  parser.addValue("--opset", [&](const std::string &value) {
    options.opset = train::parseCount("--opset", value, 1);
  });
  if (!parser.parse(args, options.planPath)) {
    options.help = true;
    return options;
  }
  if (options.planPath.empty())
    throw UsageError("missing the plan file (dpc export PLAN -o FILE.npz)");
  if (options.outputPath.empty())
    throw UsageError("missing -o FILE.onnx, -o FILE.npz or -o "
                     "FILE.safetensors");
  if (format.empty())
    format = hasExtension(options.outputPath, ".onnx")          ? "onnx"
             : hasExtension(options.outputPath, ".safetensors") ? "safetensors"
                                                                : "npz";
  options.format = format == "onnx"          ? ExportFormat::Onnx
                   : format == "safetensors" ? ExportFormat::Safetensors
                                             : ExportFormat::Npz;
  if (options.opset && options.format != ExportFormat::Onnx)
    throw UsageError("--opset is for ONNX files (-o FILE.onnx)");
  return options;
}

/// NumPy's type string of `dtype`, or null where NumPy has none.
const char *getNpyDescr(plan::DType dtype) {
  switch (dtype) {
  case plan::DType::F32:
    return "<f4";
  case plan::DType::F64:
    return "<f8";
  case plan::DType::F16:
    return "<f2";
  case plan::DType::I32:
    return "<i4";
  case plan::DType::I64:
    return "<i8";
  case plan::DType::U8:
    return "|u1";
  default:
    return nullptr;
  }
}

/// The plan's own value of `tensor`: its data (a shard's whole from every
/// shard's, a copy's from the copy with data), or zeros or ones.
std::vector<uint8_t> getInitialValue(const plan::Plan &plan,
                                     const plan::PersistentTensor &tensor) {
  int64_t count = plan::getNumElements(rt::getWholeDims(tensor));
  int64_t size = plan::getDTypeSize(tensor.dtype());
  if (rt::isShard(tensor) && tensor.init() == plan::InitKind::Data) {
    std::vector<uint8_t> whole(count * size);
    for (const plan::PersistentTensor *shard : *plan.persistent())
      if (shard->name()->str() == tensor.name()->str() && shard->data())
        std::copy(shard->data()->begin(), shard->data()->end(),
                  whole.begin() + shard->shard_offset() * size);
    return whole;
  }
  if (tensor.init() == plan::InitKind::SameAsCopy)
    for (const plan::PersistentTensor *copy : *plan.persistent())
      if (copy->name()->str() == tensor.name()->str() &&
          copy->init() == plan::InitKind::Data && copy->data())
        return {copy->data()->begin(), copy->data()->end()};
  if (tensor.init() == plan::InitKind::Data && tensor.data())
    return {tensor.data()->begin(), tensor.data()->end()};
  std::vector<uint8_t> bytes(count * size, 0);
  if (tensor.init() != plan::InitKind::Ones)
    return bytes;
  std::vector<uint8_t> one(size, 0);
  switch (tensor.dtype()) {
  case plan::DType::F32: {
    float value = 1;
    std::memcpy(one.data(), &value, size);
    break;
  }
  case plan::DType::F64: {
    double value = 1;
    std::memcpy(one.data(), &value, size);
    break;
  }
  default:
    one[0] = 1; // integers, little-endian
  }
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(&bytes[i * size], one.data(), size);
  return bytes;
}

/// Each parameter and buffer of the plan once (the lowest device's copy),
/// in plan order.
std::vector<const plan::PersistentTensor *>
getExportedTensors(const plan::Plan &plan) {
  std::map<std::string, const plan::PersistentTensor *> lowest;
  std::vector<std::string> order;
  for (const plan::PersistentTensor *tensor : *plan.persistent()) {
    if (tensor->kind() == plan::PersistentKind::OptimizerState ||
        tensor->kind() == plan::PersistentKind::GradAccumulator)
      continue;
    std::string name = tensor->name()->str();
    auto [it, inserted] = lowest.emplace(name, tensor);
    if (inserted)
      order.push_back(name);
    else if (tensor->device() < it->second->device())
      it->second = tensor;
  }
  std::vector<const plan::PersistentTensor *> tensors;
  for (const std::string &name : order)
    tensors.push_back(lowest[name]);
  return tensors;
}

/// The plan's parameters and buffers, with their values from `state` (when
/// given) or the plan.
std::vector<ExportedTensor> collectTensors(const plan::LoadedPlan &loaded,
                                           const train::TrainingState *state,
                                           const std::string &statePath) {
  std::map<std::string, const train::SavedTensor *> saved;
  if (state)
    for (const train::SavedTensor &tensor : state->tensors)
      saved[tensor.name] = &tensor;
  std::vector<ExportedTensor> tensors;
  for (const plan::PersistentTensor *tensor :
       getExportedTensors(loaded.get())) {
    ExportedTensor exported{tensor->name()->str(),
                            tensor->dtype(),
                            rt::getWholeDims(*tensor),
                            {},
                            tensor->kind()};
    if (state) {
      auto it = saved.find(exported.name);
      if (it == saved.end() || it->second->dims != exported.dims ||
          it->second->dtype != int32_t(tensor->dtype()))
        throw RunError(statePath + ": has no tensor '" + exported.name + "' " +
                       plan::formatDims(exported.dims) +
                       " (a checkpoint of another plan?)");
      train::checkStateValues(*it->second, tensor->kind(), statePath);
      exported.bytes = it->second->bytes;
    } else {
      exported.bytes = getInitialValue(loaded.get(), *tensor);
    }
    tensors.push_back(std::move(exported));
  }
  return tensors;
}

std::vector<uint8_t>
encodeTensorsAsNpz(const std::vector<ExportedTensor> &tensors,
                   const std::string &planName) {
  std::vector<train::NpzEntry> entries;
  for (const ExportedTensor &tensor : tensors) {
    const char *descr = getNpyDescr(tensor.dtype);
    if (!descr)
      throw RunError(planName + ": tensor '" + tensor.name + "' is " +
                     plan::EnumNameDType(tensor.dtype) +
                     ", which .npz cannot hold (use --format safetensors)");
    entries.push_back(
        {tensor.name, train::encodeNpy(descr, tensor.dims, tensor.bytes.data(),
                                       tensor.bytes.size())});
  }
  return train::encodeNpz(entries);
}

/// safetensors' dtype names.
const char *getSafetensorsDType(plan::DType dtype) {
  switch (dtype) {
  case plan::DType::F32:
    return "F32";
  case plan::DType::F64:
    return "F64";
  case plan::DType::F16:
    return "F16";
  case plan::DType::BF16:
    return "BF16";
  case plan::DType::I32:
    return "I32";
  case plan::DType::I64:
    return "I64";
  case plan::DType::U8:
    return "U8";
  case plan::DType::TF32: // a compute type: no tensor holds it
    return "TF32";
  }
  return "U8";
}

/// A JSON string of `text` (names are plain, but quotes must not break it).
std::string quoteJson(const std::string &text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

/// The safetensors file of `tensors`: a u64 header length, a JSON header of
/// each tensor's dtype, shape and byte range (padded with spaces to a
/// multiple of 8), then the tensors' bytes in order.
std::vector<uint8_t>
encodeTensorsAsSafetensors(const std::vector<ExportedTensor> &tensors) {
  std::string header = "{\"__metadata__\": {\"format\": \"pt\"}";
  uint64_t offset = 0;
  for (const ExportedTensor &tensor : tensors) {
    header += ", " + quoteJson(tensor.name) + ": {\"dtype\": \"" +
              getSafetensorsDType(tensor.dtype) + "\", \"shape\": [";
    for (size_t d = 0; d < tensor.dims.size(); ++d)
      header += (d ? ", " : "") + std::to_string(tensor.dims[d]);
    header += "], \"data_offsets\": [" + std::to_string(offset) + ", " +
              std::to_string(offset + tensor.bytes.size()) + "]}";
    offset += tensor.bytes.size();
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> out;
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t(uint64_t(header.size()) >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  for (const ExportedTensor &tensor : tensors)
    out.insert(out.end(), tensor.bytes.begin(), tensor.bytes.end());
  return out;
}

std::string_view asStringView(const flatbuffers::Vector<uint8_t> &bytes) {
  return {reinterpret_cast<const char *>(bytes.data()), bytes.size()};
}

/// The graph of `model` in the form of `opset`: the recorded one where its
/// operators are the same there, else the converted form dpc compile
/// recorded for it. Throws RunError (naming `planName`) where there is
/// none, with the reason.
std::string_view getGraphAtOpset(const plan::OnnxModel &model, int64_t opset,
                                 const std::string &planName) {
  if (opset >= model.min_opset() && opset <= model.max_opset())
    return asStringView(*model.graph());
  std::string failure = planName + ": --opset " + std::to_string(opset) + ": ";
  if (model.forms())
    for (const plan::OnnxGraphForm *form : *model.forms()) {
      if (opset < form->min_opset() || opset > form->max_opset())
        continue;
      if (form->problem() && form->problem()->size())
        throw RunError(failure + form->problem()->str());
      return asStringView(form->graph() && form->graph()->size()
                              ? *form->graph()
                              : *model.graph());
    }
  if (!model.forms())
    throw RunError(failure + "the model's operators are those of its opset " +
                   std::to_string(model.opset()) + " only at opsets " +
                   std::to_string(model.min_opset()) + " to " +
                   std::to_string(model.max_opset()) +
                   " (compile the model again for the other opsets dpc "
                   "converts to)");
  throw RunError(failure + "dpc writes opsets 7 to 21 (the model's is " +
                 std::to_string(model.opset()) + ")");
}

/// The model's eval graph with those of `tensors` it reads as its
/// initializers (their count in `written`), at the model's opset or `opset`.
std::vector<uint8_t>
encodeTensorsAsOnnx(const plan::LoadedPlan &loaded,
                    const std::vector<ExportedTensor> &tensors, int64_t opset,
                    const train::DataForm &form, size_t &written) {
  const std::string &planName = loaded.getName();
  const plan::OnnxModel *model = loaded->onnx_model();
  if (!model)
    throw RunError(planName + ": holds no ONNX graph (compiled from an .mlir "
                              "model, or by a dpc without ONNX export); "
                              "compile the .onnx model again, or export the "
                              "weights with -o FILE.npz");
  if (model->problem() && model->problem()->size())
    throw RunError(planName +
                   ": cannot be exported as ONNX: " + model->problem()->str());
  if (!opset)
    opset = model->opset();
  std::string_view graph = getGraphAtOpset(*model, opset, planName);
  // The data form the weights were trained for: --normalize goes into the
  // graph, so the file takes the pixels dpc predict takes; both are
  // recorded as metadata too (dpc.normalize, MEAN,...:STD,... of [0, 1]
  // pixels, applied by the graph; dpc.layout, that of the run's files).
  std::vector<uint8_t> normalized;
  train::OnnxMetadata metadata;
  if (!form.normalization.empty()) {
    std::set<std::string> state;
    for (const ExportedTensor &tensor : tensors)
      state.insert(tensor.name);
    normalized =
        train::normalizeImageInputs(graph, state, form.normalization, planName);
    graph = std::string_view(reinterpret_cast<const char *>(normalized.data()),
                             normalized.size());
    metadata.push_back(
        {"dpc.normalize", train::formatNormalization(form.normalization)});
  }
  if (form.layout != data::ImageLayout::Auto)
    metadata.push_back({"dpc.layout", form.layout == data::ImageLayout::NHWC
                                          ? "nhwc"
                                          : "nchw"});
  return train::encodeOnnxModel(*model, graph, tensors, opset, planName,
                                metadata, &written);
}

/// The plan's parameters and buffers, from the checkpoint in `directory`
/// (empty: the plan's own values), and the data form it trained with.
std::vector<ExportedTensor>
loadExportedTensors(const plan::LoadedPlan &loaded,
                    const std::string &directory,
                    train::DataForm *form = nullptr) {
  std::unique_ptr<train::TrainingState> state;
  std::string statePath;
  if (!directory.empty()) {
    statePath = train::getCheckpointPath(directory);
    if (!std::ifstream(statePath))
      throw RunError(statePath + ": no checkpoint there");
    state = std::make_unique<train::TrainingState>(
        train::loadCheckpoint(directory));
    if (form)
      *form = state->dataForm;
  }
  return collectTensors(loaded, state.get(), statePath);
}

} // namespace

std::vector<ExportedTensor>
loadExportedTensors(const std::string &planPath,
                    const std::string &checkpointDirectory) {
  return loadExportedTensors(*plan::LoadedPlan::load(planPath),
                             checkpointDirectory);
}

const char *getExportUsage() {
  return "usage: dpc export PLAN -o FILE.onnx|FILE.npz|FILE.safetensors "
         "[options]\n"
         "Writes the trained model as ONNX (its eval graph), or its "
         "parameters and buffers, named as in the model file, for NumPy and "
         "PyTorch.\n"
         "\n"
         "Input:\n"
         "  --checkpoint DIR    the training state to export (default: the "
         "plan's initial values)\n"
         "Output:\n"
         "  -o FILE             the file; tensors in plain layout\n"
         "  --format FORMAT     onnx, npz or safetensors (default: by the "
         "extension, .onnx or .safetensors, else npz)\n"
         "  --opset N           the ONNX opset, 7 to 21 (default: the model's; "
         "operators whose form differs are rewritten)\n";
}

int exportCommand(const std::vector<std::string> &args, std::ostream &out,
                  std::ostream &err) {
  try {
    ExportOptions options = parseExportOptions(args);
    if (options.help) {
      out << getExportUsage();
      return 0;
    }
    auto loaded = plan::LoadedPlan::load(options.planPath);
    train::DataForm form;
    std::vector<ExportedTensor> tensors =
        loadExportedTensors(*loaded, options.checkpointDirectory, &form);
    std::vector<uint8_t> bytes;
    size_t written = tensors.size();
    switch (options.format) {
    case ExportFormat::Onnx:
      bytes =
          encodeTensorsAsOnnx(*loaded, tensors, options.opset, form, written);
      break;
    case ExportFormat::Safetensors:
      bytes = encodeTensorsAsSafetensors(tensors);
      break;
    case ExportFormat::Npz:
      bytes = encodeTensorsAsNpz(tensors, loaded->getName());
      break;
    }
    train::writeFileAtomically(options.outputPath, bytes);
    out << "exported " << written << " tensors to " << options.outputPath
        << std::endl;
    return 0;
  } catch (const UsageError &error) {
    err << "dpc export: " << error.what() << " (see dpc export --help)"
        << std::endl;
  } catch (const std::exception &error) {
    err << error.what() << std::endl;
  }
  return 1;
}

} // namespace dpc::runtime
