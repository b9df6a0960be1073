//===- SchemaCheck.cpp - each node against its ONNX schema ----------------===//

#include "frontend/onnx/SchemaCheck.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace dpc::frontend {
namespace {

struct AttributeSchema {
  const char *name;
  int type; // onnx::AttributeProto::AttributeType
  bool required;
};

/// One definition of an operator, from its since version on.
struct OpSchema {
  const char *name;
  int64_t sinceVersion;
  bool deprecated;
  int64_t minInputs, maxInputs, minOutputs, maxOutputs;
  /// A letter per formal input: S single, O optional, V variadic.
  const char *formalInputs;
  std::vector<AttributeSchema> attributes;
};

/// Every definition, by name and then since version.
const std::vector<OpSchema> &getSchemas() {
  static const std::vector<OpSchema> schemas = {
#define SCHEMA(NAME, SINCE, DEPRECATED, MIN_IN, MAX_IN, MIN_OUT, MAX_OUT,      \
               FORMAL, ...)                                                    \
  {#NAME,   SINCE,  DEPRECATED,                                                \
   MIN_IN,  MAX_IN, MIN_OUT,                                                   \
   MAX_OUT, FORMAL, std::vector<AttributeSchema> __VA_ARGS__},
#include "frontend/onnx/OnnxOpSchemas.inc"
#undef SCHEMA
  };
  return schemas;
}

/// The definition of `op` in force at `opset`, or null.
const OpSchema *findSchema(llvm::StringRef op, int64_t opset) {
  const std::vector<OpSchema> &schemas = getSchemas();
  auto first = std::lower_bound(
      schemas.begin(), schemas.end(), op,
      [](const OpSchema &s, llvm::StringRef name) { return name > s.name; });
  const OpSchema *found = nullptr;
  for (auto it = first; it != schemas.end() && op == it->name; ++it)
    if (it->sinceVersion <= opset)
      found = &*it;
  return found;
}

const char *getTypeName(int type) {
  switch (type) {
  case onnx::AttributeProto::FLOAT:
    return "a float";
  case onnx::AttributeProto::INT:
    return "an int";
  case onnx::AttributeProto::STRING:
    return "a string";
  case onnx::AttributeProto::TENSOR:
    return "a tensor";
  case onnx::AttributeProto::GRAPH:
    return "a graph";
  case onnx::AttributeProto::FLOATS:
    return "floats";
  case onnx::AttributeProto::INTS:
    return "ints";
  case onnx::AttributeProto::STRINGS:
    return "strings";
  case onnx::AttributeProto::TENSORS:
    return "tensors";
  case onnx::AttributeProto::GRAPHS:
    return "graphs";
  case onnx::AttributeProto::SPARSE_TENSOR:
    return "a sparse tensor";
  case onnx::AttributeProto::SPARSE_TENSORS:
    return "sparse tensors";
  case onnx::AttributeProto::TYPE_PROTO:
    return "a type";
  case onnx::AttributeProto::TYPE_PROTOS:
    return "types";
  default:
    return "of no type";
  }
}

std::string describeRange(int64_t min, int64_t max, const char *what) {
  constexpr int64_t kUnbounded = 2147483647;
  std::string count = min == max ? std::to_string(min)
                      : max == kUnbounded
                          ? std::to_string(min) + " or more"
                          : std::to_string(min) + " to " + std::to_string(max);
  return count + " " + what + (min == 1 && max == 1 ? "" : "s");
}

std::string checkCounts(const onnx::NodeProto &node, const OpSchema &schema,
                        const std::string &op) {
  int64_t inputs = node.input_size(), outputs = node.output_size();
  if (inputs < schema.minInputs || inputs > schema.maxInputs)
    return op + " takes " +
           describeRange(schema.minInputs, schema.maxInputs, "input") +
           ", not " + std::to_string(inputs);
  if (outputs < schema.minOutputs || outputs > schema.maxOutputs)
    return op + " has " +
           describeRange(schema.minOutputs, schema.maxOutputs, "output") +
           ", not " + std::to_string(outputs);
  // An empty name leaves out an optional input; a single one must be there.
  llvm::StringRef formal = schema.formalInputs;
  for (int64_t i = 0; i < inputs && !formal.empty(); ++i) {
    char option = formal[std::min<size_t>(i, formal.size() - 1)];
    if (node.input(i).empty() && option == 'S')
      return "input " + std::to_string(i) + " of " + op +
             " is required, but its name is empty";
  }
  return "";
}

std::string checkAttributes(const onnx::NodeProto &node, const OpSchema &schema,
                            const std::string &op) {
  llvm::ArrayRef<AttributeSchema> known = schema.attributes;
  std::vector<bool> given(known.size(), false);
  for (const onnx::AttributeProto &attribute : node.attribute()) {
    const std::string &name = attribute.name();
    auto it =
        std::find_if(known.begin(), known.end(),
                     [&](const AttributeSchema &a) { return name == a.name; });
    if (it == known.end()) {
      // ONNX's checker lets internal ("__...") attributes pass.
      if (llvm::StringRef(name).starts_with("__"))
        continue;
      return op + " has no attribute '" + name + "'";
    }
    if (given[it - known.begin()])
      return "attribute '" + name + "' is given twice";
    given[it - known.begin()] = true;
    if (!attribute.ref_attr_name().empty())
      continue; // a function's reference, typed where it is defined
    if (attribute.type() != it->type)
      return "attribute '" + name + "' is " + getTypeName(attribute.type()) +
             ", but " + op + " takes " + getTypeName(it->type);
  }
  for (size_t a = 0; a < known.size(); ++a)
    if (known[a].required && !given[a])
      return op + " requires attribute '" + known[a].name + "'";
  return "";
}

} // namespace

std::string checkNodeSchema(const onnx::NodeProto &node, int64_t opset) {
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return "";
  const OpSchema *schema = findSchema(node.op_type(), opset);
  if (!schema)
    return "";
  std::string op = node.op_type() + "-" + std::to_string(schema->sinceVersion);
  if (schema->deprecated)
    return node.op_type() + " is deprecated since opset " +
           std::to_string(schema->sinceVersion);
  std::string problem = checkCounts(node, *schema, op);
  if (problem.empty())
    problem = checkAttributes(node, *schema, op);
  return problem;
}

} // namespace dpc::frontend
