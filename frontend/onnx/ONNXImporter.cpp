//===- ONNXImporter.cpp - ONNX model file to nn IR ------------------------===//
//
// The public entry points: read and check a model file, then hand it to the
// Importer (Importer.h); read the initial values of its tensors.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ONNXImporter.h"
#include "frontend/onnx/Importer.h"
#include "frontend/onnx/ModelValidation.h"

#include "ir/nn/NNOps.h"
#include "runtime/abi/CheckedMath.h"
#include "runtime/io/OneLine.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>

using namespace mlir;
using namespace dpc;
using frontend::fail;
using frontend::ImportError;

/// Refuses a NaN or infinite initial value: it would make every parameter
/// it reaches non-finite, silently once a ReLU turns NaN into 0.
template <typename T>
static void requireFinite(const onnx::TensorProto &tensor,
                          const std::vector<uint8_t> &bytes) {
  for (size_t i = 0; i < bytes.size() / sizeof(T); ++i) {
    T value;
    std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
    if (!std::isfinite(value))
      fail("initializer '" + tensor.name() + "' holds " +
           (std::isnan(value) ? "NaN" : "an infinite value") + " at index " +
           std::to_string(i) + "; initial parameters must be finite");
  }
}

static void requireFinite(const onnx::TensorProto &tensor,
                          const std::vector<uint8_t> &bytes) {
  if (tensor.data_type() == onnx::TensorProto::FLOAT)
    requireFinite<float>(tensor, bytes);
  else if (tensor.data_type() == onnx::TensorProto::DOUBLE)
    requireFinite<double>(tensor, bytes);
}

/// The bytes of one tensor, in its own element type.
static std::vector<uint8_t> tensorBytes(const onnx::TensorProto &tensor,
                                        StringRef modelDir) {
  size_t count = frontend::elementCount(tensor);
  auto fromValues = [&](auto values, const auto &typed) {
    using T = typename decltype(values)::value_type;
    values = frontend::tensorValues<T>(tensor, typed, count);
    std::vector<uint8_t> bytes(count * sizeof(T));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  };
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    size_t offset = 0, length = 0;
    for (const auto &entry : tensor.external_data()) {
      if (entry.key() == "location")
        location = entry.value();
      else if ((entry.key() == "offset" || entry.key() == "length") &&
               StringRef(entry.value())
                   .getAsInteger(10, entry.key() == "offset" ? offset : length))
        fail("tensor '" + tensor.name() + "': its external data " +
             entry.key() + " '" + entry.value() + "' is not a byte count");
    }
    SmallString<256> file(modelDir);
    llvm::sys::path::append(file, location);
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      fail("tensor '" + tensor.name() + "': cannot read its external data " +
           std::string(file));
    StringRef data = (*buffer)->getBuffer();
    if (offset > data.size() || (length && offset + length > data.size()))
      fail("tensor '" + tensor.name() + "': its external data in " +
           std::string(file) + " is shorter than the model says");
    data = data.substr(offset, length ? length : StringRef::npos);
    return std::vector<uint8_t>(data.begin(), data.end());
  }
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return fromValues(std::vector<float>(), tensor.float_data());
  case onnx::TensorProto::DOUBLE:
    return fromValues(std::vector<double>(), tensor.double_data());
  case onnx::TensorProto::INT64:
    return fromValues(std::vector<int64_t>(), tensor.int64_data());
  case onnx::TensorProto::INT32:
    return fromValues(std::vector<int32_t>(), tensor.int32_data());
  case onnx::TensorProto::BOOL:
    return fromValues(std::vector<uint8_t>(), tensor.int32_data());
  default:
    fail("tensor '" + tensor.name() + "' has an element type (" +
         std::to_string(tensor.data_type()) + ") that cannot be read");
  }
}

static bool readTensors(StringRef path,
                        llvm::StringMap<std::vector<uint8_t>> &tensors,
                        std::string &error) {
  std::ifstream file(path.str(), std::ios::binary);
  onnx::ModelProto model;
  if (!file || !model.ParseFromIstream(&file)) {
    error = "not an ONNX model (truncated, or not a model file?)";
    return false;
  }
  StringRef modelDir = llvm::sys::path::parent_path(path);
  try {
    for (const auto &init : model.graph().initializer()) {
      tensors[init.name()] = tensorBytes(init, modelDir);
      requireFinite(init, tensors[init.name()]);
    }
    for (const auto &node : model.graph().node())
      if (node.op_type() == "Constant" && node.output_size() == 1)
        for (const auto &attr : node.attribute())
          if (attr.name() == "value")
            tensors[node.output(0)] = tensorBytes(attr.t(), modelDir);
  } catch (ImportError &e) {
    error = e.message;
    return false;
  }
  return true;
}

static OwningOpRef<ModuleOp> importModel(StringRef path, MLIRContext &context,
                                         std::string &error) {
  context.loadDialect<nn::NNDialect, func::FuncDialect>();
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read the file: " + buffer.getError().message();
    return nullptr;
  }
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.empty()) {
    error = "the file is empty, not an ONNX model";
    return nullptr;
  }
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      !model.has_graph()) {
    error = "not an ONNX model (truncated, or not a model file?)";
    return nullptr;
  }
  // External tensor data lives next to the model file.
  if (std::string problem = dpc::frontend::validateModel(
          model, llvm::sys::path::parent_path(path));
      !problem.empty()) {
    error = "invalid ONNX model: " + problem;
    return nullptr;
  }
  try {
    frontend::Importer importer(context, path, model);
    return importer.run();
  } catch (ImportError &e) {
    error = e.message;
    return nullptr;
  }
}

// The model's names may hold anything, newlines included: its errors stay
// one line.
bool dpc::frontend::readONNXTensors(
    StringRef path, llvm::StringMap<std::vector<uint8_t>> &tensors,
    std::string &error) {
  bool read = readTensors(path, tensors, error);
  error = dpc::io::oneLine(error);
  return read;
}

OwningOpRef<ModuleOp> dpc::frontend::importONNXFile(StringRef path,
                                                    MLIRContext &context,
                                                    std::string &error) {
  OwningOpRef<ModuleOp> module = importModel(path, context, error);
  error = dpc::io::oneLine(error);
  return module;
}
