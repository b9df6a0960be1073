//===- NNDialect.td - the nn dialect -----------------------*- tablegen -*-===//
//
// The forward graph of a model: value-semantic tensor ops on one device.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_IR_NN_NNDIALECT_TD
#define DPC_IR_NN_NNDIALECT_TD

include "mlir/IR/OpBase.td"

def NN_Dialect : Dialect {
  let name = "nn";
  let cppNamespace = "::dpc::nn";
  let summary = "Value-semantic neural-network tensor ops";
  let description = [{
    The `nn` dialect holds a model's forward pass on a single device: tensor
    ops with value semantics, NCHW layout for images, and a batch dimension
    that is the leading dimension of every activation. Model parameters are
    arguments of the enclosing function, named by the `nn.param` (trainable)
    or `nn.buffer` (state such as batch-norm running statistics) argument
    attribute, plus `nn.init_from` where its initial value is that of another
    model-file tensor; data arrives through arguments marked `nn.input`, and
    results are named by `nn.output`.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// Argument attribute naming a trainable parameter.
    static constexpr ::llvm::StringLiteral kParamAttrName = "nn.param";
    /// Argument attribute naming non-trainable state (running statistics).
    static constexpr ::llvm::StringLiteral kBufferAttrName = "nn.buffer";
    /// Argument attribute naming the model-file tensor a parameter starts
    /// out equal to, where that is not the parameter's own name.
    static constexpr ::llvm::StringLiteral kInitFromAttrName = "nn.init_from";
    /// Argument attribute naming a data input of the model.
    static constexpr ::llvm::StringLiteral kInputAttrName = "nn.input";
    /// Result attribute naming an output of the model.
    static constexpr ::llvm::StringLiteral kOutputAttrName = "nn.output";
  }];
}

class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, traits>;

def NN_FloatTensor : RankedTensorOf<[AnyFloat]>;
def NN_IndexTensor : RankedTensorOf<[AnySignlessInteger]>;

#endif // DPC_IR_NN_NNDIALECT_TD
