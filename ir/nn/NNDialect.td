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

    // The signature of a training step (nn-build-train-step).
    /// Unit argument attribute marking the labels of a step.
    static constexpr ::llvm::StringLiteral kLabelsAttrName = "nn.labels";
    /// Unit argument attribute marking the run-time learning rate.
    static constexpr ::llvm::StringLiteral kLearningRateAttrName = "nn.lr";
    /// Unit argument attribute marking the run-time 1-based step number.
    static constexpr ::llvm::StringLiteral kStepAttrName = "nn.step";
    /// Argument attribute naming optimizer state, "<param>.<state>".
    static constexpr ::llvm::StringLiteral kOptStateAttrName = "nn.opt_state";
    /// Result attributes naming the new value of a parameter, buffer or
    /// optimizer state argument, which the runtime writes back.
    static constexpr ::llvm::StringLiteral kParamUpdateAttrName =
        "nn.param_update";
    static constexpr ::llvm::StringLiteral kBufferUpdateAttrName =
        "nn.buffer_update";
    static constexpr ::llvm::StringLiteral kOptStateUpdateAttrName =
        "nn.opt_state_update";
  }];
}

class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, traits>;

def NN_FloatTensor : RankedTensorOf<[AnyFloat]>;
def NN_IndexTensor : RankedTensorOf<[AnySignlessInteger]>;
def NN_AnyTensor : RankedTensorOf<[AnyFloat, AnySignlessInteger]>;

#endif // DPC_IR_NN_NNDIALECT_TD
