//===- DistDialect.td - the dist dialect -------------------*- tablegen -*-===//
//
// What moves between devices in a data-parallel step, as value-semantic ops
// over tensors. Names and semantics follow MLIR's `mesh` dialect where they
// overlap; which stream and when is `exec`'s business, how is the runtime's.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_IR_DIST_DISTDIALECT_TD
#define DPC_IR_DIST_DISTDIALECT_TD

include "mlir/IR/OpBase.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::dpc::dist";
  let summary = "Data movement between the devices of a data-parallel step";
  let description = [{
    A step partitioned over N devices holds one replica of its body per
    device. `dist` ops connect them: an op with per-device operands or
    results has one per device, in device order. The devices themselves are
    named by the step's `dist.devices` attribute (`"cpu:K"` or `"cuda:K"`),
    the batch share of each by `dist.split`, and the replica an op or a
    result belongs to by `dist.replica`.

    In a replica, `nn.loss` and `nn.loss_grad` average
    over the global batch (the sum of every replica's rows at run time), not
    over the replica's own rows: the replicas' losses and gradients then sum
    to the global-batch mean whatever the split, so DDP's plain averaging
    (wrong for uneven splits) is never needed.
  }];
  let hasOperationAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Function attribute: the devices, an array of "cpu:K" / "cuda:K".
    static constexpr ::llvm::StringLiteral kDevicesAttrName = "dist.devices";
    /// Function attribute: each device's share of the batch (array<i64>).
    static constexpr ::llvm::StringLiteral kSplitAttrName = "dist.split";
    /// Op and result attribute: the replica (device index) it belongs to.
    static constexpr ::llvm::StringLiteral kReplicaAttrName = "dist.replica";
    /// Unit attribute of a `dist.all_reduce` of batch-norm statistics
    /// (--sync-bn): on the critical path, so never bucketed with gradients.
    static constexpr ::llvm::StringLiteral kStatisticsAttrName =
        "dist.statistics";
    /// Step attribute: what the step shards across its replicas
    /// ("optimizer": ZeRO-1, dpc-shard-optimizer-state; "gradients": ZeRO-2,
    /// dpc-shard-gradients after it); absent: nothing.
    static constexpr ::llvm::StringLiteral kShardAttrName = "dist.shard";
  }];
}

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

#endif // DPC_IR_DIST_DISTDIALECT_TD
