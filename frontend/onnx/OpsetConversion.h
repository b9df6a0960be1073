//===- OpsetConversion.h - an eval graph at another opset -------*- C++ -*-===//
//
// `dpc export --opset N` writes the model at another opset than the one it
// came in: nodes whose operator keeps its definition stay as they are, and
// the ones whose form changed between the two opsets are rewritten (axes
// from an attribute to an input at ReduceSum 13, Squeeze/Unsqueeze 13,
// the other reductions 18; Split's sizes at 13 and num_outputs at 18; the
// softmaxes' axis at 13; Gelu and HardSwish, which older opsets lack,
// decomposed; inference-form Dropout an Identity). What cannot be written
// at the target opset is a one-phrase problem naming the node.
//
// The versions of each operator come from OnnxOpVersions.inc, generated
// from a current ONNX (Debian's library knows opsets up to 17 only).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_OPSETCONVERSION_H
#define DPC_FRONTEND_ONNX_OPSETCONVERSION_H

#include <cstdint>
#include <string>

namespace onnx {
class GraphProto;
} // namespace onnx

namespace dpc::frontend {

/// The lowest opset that dpc converts a graph to; below it, a graph is
/// written only where no node's operator changes.
constexpr int64_t kMinConvertedOpset = 11;

/// The version of the default domain's `op` in effect at `opset` (the
/// newest definition since), or 0 where the opset has no such operator.
int64_t getOperatorVersion(const std::string &op, int64_t opset);

/// Whether every default-domain node of `graph` has the same operator
/// version at opsets `from` and `to`: the graph is valid at both.
bool keepsOperatorVersions(const onnx::GraphProto &graph, int64_t from,
                           int64_t to);

/// Rewrites `graph`, written for default-domain opset `from`, into opset
/// `to`'s forms. Returns the problem ("" when done), which leaves `graph`
/// partly rewritten.
std::string convertOpset(onnx::GraphProto &graph, int64_t from, int64_t to);

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_OPSETCONVERSION_H
