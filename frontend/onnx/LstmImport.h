//===- LstmImport.h - ONNX LSTM, unrolled into nn ops -----------*- C++ -*-===//
//
// ONNX's LSTM, GRU and RNN run over a sequence whose length is static, so
// dpc imports them unrolled (RecurrentImport.cpp): one matmul of the whole
// input by the input weights, then per time step a linear layer of the
// hidden state, the gates and the state update, all existing nn ops, whose
// vector-Jacobian products make the backward through time.
//
// Its default layout (0) is sequence first, [T, N, ...], with the batch in
// dim 1, where dpc's plans cannot hold it (the batch is dim 0). PyTorch
// writes a Transpose of its batch-first input before the LSTM and
// Transposes, Squeezes and Reshapes after it back to batch first. So a
// value whose batch an op moved out of dim 0 is kept here as a view: the
// batch-first nn value and the dim the batch sits in. Transpose, Reshape,
// Squeeze, Unsqueeze and Shape read views (and make plain values again
// once the batch is back in dim 0), a recurrent layer reads its input and
// initial state from them; any other op reads the view as an nn.transpose
// that moves the batch (nn tensors may hold it in any dim).
// Likewise a batch-dependent fill (PyTorch's zero initial state,
// ConstantOfShape or Expand to [layers, N, H]) is kept as its value and
// shape, read by Shape, Slice and the recurrent layers.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_LSTMIMPORT_H
#define DPC_FRONTEND_ONNX_LSTMIMPORT_H

#include "frontend/onnx/ImportContext.h"

#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace dpc::frontend {

/// Whether input `i` of `node` is given (present and named).
bool hasInput(const onnx::NodeProto &node, int i);
/// "[d0, d1, ...]", kBatch written as "batch".
std::string dimsToString(llvm::ArrayRef<int64_t> dims);

class LstmImport {
public:
  explicit LstmImport(ImportContext &context) : context(context) {}

  /// Imports `node` if it is an LSTM or reads or makes a view or a fill;
  /// false if it is none of those (the importer's to import).
  bool importNode(const onnx::NodeProto &node, int64_t opset);
  /// A view `name` as an nn tensor with the batch where ONNX has it (for
  /// ops other than those above), bound to `name`; null if `name` is no
  /// view or fill.
  mlir::Value materialize(const std::string &name);

private:
  /// A value whose batch is in dim `batchDim`: `batchFirst` with its dim 0
  /// moved there.
  struct View {
    mlir::Value batchFirst;
    int64_t batchDim;
  };
  /// Every element `value`, of `dims` (kBatch for the batch).
  struct Fill {
    std::vector<int64_t> dims;
    double value;
    bool isFloat;
  };
  /// Makes fill `name` a view: its value per sample repeated for each row
  /// of the batch (a tensor op reads it: PyTorch's zero state of an RNN
  /// the dynamo exporter decomposes); false if `name` is no fill. Fails
  /// for a fill that cannot be one (not float, the batch in no one dim).
  bool fillToView(const std::string &name);

  /// LSTM, GRU and RNN, unrolled (RecurrentImport.cpp), one cell step at
  /// a time: each updates the step's state (h, and c for LSTM).
  struct Step;
  void importRecurrent(const onnx::NodeProto &node);
  void lstmStep(Step &step);
  void gruStep(Step &step);
  void rnnStep(Step &step);
  /// ConstantOfShape or Expand of a known value to a shape that holds the
  /// batch, as a fill; false for any other.
  bool importFill(const onnx::NodeProto &node, int64_t opset);
  void sliceFill(const onnx::NodeProto &node);
  void importTranspose(const onnx::NodeProto &node);
  /// Reshape, Squeeze and Unsqueeze of a view, to `dims` (kBatch marks
  /// the batch); false if that merges the batch with other dims.
  bool reshapeView(const onnx::NodeProto &node, const View &view,
                   std::vector<int64_t> dims);
  /// The dims Reshape (its shape input: 0 copies, -1 infers), Squeeze or
  /// Unsqueeze (its axes) makes of `from` (kBatch marks the batch).
  std::vector<int64_t> reshapeTarget(const onnx::NodeProto &node, int64_t opset,
                                     const std::vector<int64_t> &from);
  /// Binds output 0 of `node` to `batchFirst` with its batch in `batchDim`:
  /// a plain value if that is 0, else a view.
  void define(const onnx::NodeProto &node, int i, mlir::Value batchFirst,
              int64_t batchDim);
  /// The ONNX dims of a view (kBatch for the batch).
  static std::vector<int64_t> dimsOf(const View &view);
  /// Input `i` of `node` as a batch-first value for a tensor whose batch is
  /// in `batchDim`: a view with its batch there, or a plain value if
  /// `batchDim` is 0. A zero fill or an omitted input is a null value.
  mlir::Value batchFirstInput(const onnx::NodeProto &node, int i,
                              int64_t batchDim);
  mlir::Value reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  /// `value` cut into `parts` equal parts along `axis`.
  llvm::SmallVector<mlir::Value> split(mlir::Value value, int64_t axis,
                                       int64_t parts);
  mlir::Value concat(llvm::ArrayRef<mlir::Value> values, int64_t axis);

  ImportContext &context;
  llvm::StringMap<View> views;
  llvm::StringMap<Fill> fills;
};

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_LSTMIMPORT_H
