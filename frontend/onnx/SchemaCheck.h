//===- SchemaCheck.h - each node against its ONNX schema --------*- C++ -*-===//
//
// ONNX's checker, for the per-node rules: dpc cannot run Debian's ONNX 1.12
// checker on the IR 10 / opset 18+ files PyTorch 2 writes, so it checks
// each node of the default domain against the schema of its operator at
// the model's opset, from OnnxOpSchemas.inc (generated from a current
// onnx): input and output counts, empty names only where an input or
// output is optional, attribute names, types and required attributes, and
// no deprecated operator. Operators ONNX does not define are left to the
// importer, which names what it does not support.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_SCHEMACHECK_H
#define DPC_FRONTEND_ONNX_SCHEMACHECK_H

#include <cstdint>
#include <string>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace dpc::frontend {

/// The first way `node` breaks its operator's schema at `opset` (the
/// model's default-domain opset), in a phrase ("takes 2 inputs, not 1");
/// "" when it keeps it or ONNX defines no such operator.
std::string checkNodeSchema(const onnx::NodeProto &node, int64_t opset);

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_SCHEMACHECK_H
