//===- ShapeFolding.h - shape arithmetic evaluated at import ----*- C++ -*-===//
//
// Exporters compute shapes with tensor ops: PyTorch 2's flatten is
// Shape -> Gather -> Concat -> Reshape, a bias-free convolution gets an
// Expand-ed zero bias. dpc evaluates such ops when their inputs are known
// (constants, initializers read as values, a tensor's static shape), so the
// nn dialect only sees tensor ops. The batch stays symbolic: a shape entry
// that is the batch is kBatch and follows the arithmetic that only moves it
// (Gather, Concat, Slice, Reshape, ...). Multiplying it by a constant
// gives a multiple of it (attention's batch x heads); other arithmetic on it
// is refused.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_SHAPEFOLDING_H
#define DPC_FRONTEND_ONNX_SHAPEFOLDING_H

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace dpc::frontend {

/// The symbolic batch in a known integer tensor: kBatch is the batch,
/// batchTimes(k) is k times it. A range no exporter writes (they write
/// INT64_MIN, -INT64_MAX and INT64_MAX for open slice ends).
constexpr int64_t kBatch = -(int64_t(1) << 62);
constexpr int64_t kMaxBatchMultiple = int64_t(1) << 40;
constexpr bool isBatchMultiple(int64_t value) {
  return value >= kBatch && value < kBatch + kMaxBatchMultiple;
}
constexpr int64_t batchTimes(int64_t k) { return kBatch + (k - 1); }
/// k of a value isBatchMultiple accepts.
constexpr int64_t batchMultipleOf(int64_t value) { return value - kBatch + 1; }

/// A tensor whose value is known at import. Integer tensors (ONNX INT64,
/// INT32, BOOL) keep `ints`; floating-point ones `floats`.
struct KnownTensor {
  int32_t type = 0; // onnx::TensorProto::DataType
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool isFloat() const;
  int64_t getNumElements() const;
  bool hasBatch() const;
};

/// A node that cannot be evaluated although it is shape arithmetic: the
/// message is the node's one-line error.
struct FoldError {
  std::string message;
};

/// Whether `opType` is an op the folder evaluates when its inputs are known.
bool isFoldable(const std::string &opType);

/// Evaluates `node` (an op isFoldable accepts) on `inputs`, one per node
/// input, null for an omitted optional one. `castTarget` is CastLike's
/// target type (its second input's, which need not be known). Returns the
/// outputs, or nullopt when an input it needs is not known (the importer
/// then imports the node as a tensor op). Throws FoldError.
std::optional<std::vector<KnownTensor>>
foldNode(const onnx::NodeProto &node,
         const std::vector<const KnownTensor *> &inputs, int64_t opset,
         int32_t castTarget);

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_SHAPEFOLDING_H
