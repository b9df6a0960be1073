//===- FoldOps.h - the ops the shape folder evaluates -----------*- C++ -*-===//
//
// Private to the shape folder: ShapeFolding.cpp dispatches a node to its
// op and holds the tensor helpers; FoldLayoutOps.cpp evaluates the ops
// that move known elements, FoldValueOps.cpp the ones that compute new
// values. All throw FoldError for a node they cannot evaluate.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_FOLDOPS_H
#define DPC_FRONTEND_ONNX_FOLDOPS_H

#include "frontend/onnx/ShapeFolding.h"

#include <onnx/onnx_pb.h>

namespace dpc::frontend::folding {

using Tensors = std::vector<KnownTensor>;
using Inputs = std::vector<const KnownTensor *>;

// Helpers on known tensors (ShapeFolding.cpp).
[[noreturn]] void fail(const std::string &message);
bool isFloatType(int32_t type);
int64_t product(const std::vector<int64_t> &dims);
const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                     const std::string &name);
int64_t intAttr(const onnx::NodeProto &node, const std::string &name,
                int64_t dflt);
const KnownTensor &input(const Inputs &inputs, size_t i);
std::vector<int64_t> staticInts(const KnownTensor &t, const char *what);
int64_t normalizeAxis(int64_t axis, int64_t rank);
KnownTensor gatherFlat(const KnownTensor &from, std::vector<int64_t> dims,
                       const std::vector<int64_t> &indices);
std::vector<int64_t> stridesOf(const std::vector<int64_t> &dims);
std::vector<int64_t> broadcastDims(const std::vector<const KnownTensor *> &ts);
int64_t broadcastSource(const KnownTensor &t, const std::vector<int64_t> &out,
                        int64_t flat);

// Ops that move, select or retype known elements (FoldLayoutOps.cpp).
KnownTensor shapeOf(const onnx::NodeProto &node, const KnownTensor &x);
KnownTensor gather(const onnx::NodeProto &node, const KnownTensor &data,
                   const KnownTensor &indices);
KnownTensor concat(const onnx::NodeProto &node, const Inputs &inputs);
std::vector<int64_t> axesOf(const onnx::NodeProto &node, const Inputs &inputs,
                            int64_t opset);
KnownTensor withDims(const KnownTensor &t, std::vector<int64_t> dims);
KnownTensor unsqueeze(const KnownTensor &t, std::vector<int64_t> axes);
KnownTensor squeeze(const KnownTensor &t, std::vector<int64_t> axes);
KnownTensor cast(const KnownTensor &t, int32_t to);
std::vector<int64_t> reshapeDims(const KnownTensor &data,
                                 std::vector<int64_t> shape);
KnownTensor expand(const KnownTensor &t, const std::vector<int64_t> &shape);
KnownTensor gatherElements(const onnx::NodeProto &node, const KnownTensor &data,
                           const KnownTensor &indices);
KnownTensor slice(const Inputs &inputs);
KnownTensor transpose(const onnx::NodeProto &node, const KnownTensor &t);

// Ops that compute new values (FoldValueOps.cpp).
KnownTensor trilu(const onnx::NodeProto &node, const Inputs &inputs);
KnownTensor constantOfShape(const onnx::NodeProto &node,
                            const std::vector<int64_t> &shape);
KnownTensor range(const Inputs &inputs);
KnownTensor elementwise(const std::string &op, const Inputs &inputs);
KnownTensor unary(const std::string &op, KnownTensor t);
KnownTensor extremum(const std::string &op, const Inputs &inputs);

} // namespace dpc::frontend::folding

#endif // DPC_FRONTEND_ONNX_FOLDOPS_H
