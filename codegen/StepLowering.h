//===- StepLowering.h - one step's buffers and kernel calls -----*- C++ -*-===//
//
// convert-nn-to-exec (NNToExec.cpp) lowers each replica of a step with a
// StepLowering: the buffer of every value (NNToExec.cpp), the kernels of
// the nn ops through their KernelLoweringOpInterface (lowering/), and the
// dist ops between the replicas (DistLowering.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_CODEGEN_STEPLOWERING_H
#define DPC_CODEGEN_STEPLOWERING_H

#include "codegen/lowering/KernelBuilder.h"
#include "ir/exec/ExecOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace dpc {

// The data-parallel ops the partition pass (dpc-partition-data-parallel)
// leaves between the replicas of a step.
inline constexpr llvm::StringLiteral kScatter = "dist.scatter";
inline constexpr llvm::StringLiteral kReplicate = "dist.replicate";
inline constexpr llvm::StringLiteral kAllReduce = "dist.all_reduce";
inline constexpr llvm::StringLiteral kGather = "dist.gather";
inline constexpr llvm::StringLiteral kAllGather = "dist.all_gather";
inline constexpr llvm::StringLiteral kReduceScatter = "dist.reduce_scatter";
inline constexpr llvm::StringLiteral kReplicaAttr = "dist.replica";

inline bool isDistOp(mlir::Operation *op) {
  return op->getName().getDialectNamespace() == "dist";
}

/// What every replica's lowering shares: which values scale with the batch,
/// program positions, and the batch of each replica.
struct StepAnalysis {
  mlir::LogicalResult run(mlir::func::FuncOp func);

  int64_t batch = 0;                // the global batch
  llvm::SmallVector<int64_t> split; // each replica's batch (one: {batch})
  llvm::SmallVector<std::string> devices;
  /// Where a value holds the batch: dim `axis` is `scale` times the
  /// replica's batch (merged with static dims, e.g. batch x heads).
  struct BatchDim {
    int64_t axis = 0;
    int64_t scale = 1;
  };
  llvm::DenseMap<mlir::Value, BatchDim> batchDims;
  llvm::DenseMap<mlir::Operation *, int64_t> position;
  /// The all-reduces (all-gathers) of each bucket, in program order, by
  /// member (one without a `bucket` attribute is a bucket of its own).
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Operation *>>
      bucketOf;
  bool partitioned() const { return !devices.empty(); }

private:
  /// The global batch, from the data inputs, and each replica's share.
  mlir::LogicalResult readBatch(mlir::func::FuncOp func);
  /// batchDims: which dims grow when every shape is inferred again with
  /// one more row per replica.
  mlir::LogicalResult findBatchDims(mlir::func::FuncOp func);
  /// bucketOf, from the all-reduces' `bucket` attributes.
  void groupBuckets(mlir::func::FuncOp func);
};

/// Lowers one replica of a step: gives every value its buffer and, through
/// each nn op's KernelLoweringOpInterface (codegen/lowering/), emits the
/// kernels that compute it.
class StepLowering : public KernelBuilder {
public:
  /// Lowers replica `replica` of `func` (0 when it is not partitioned).
  StepLowering(mlir::ModuleOp module, mlir::func::FuncOp func,
               const StepAnalysis &analysis, int64_t replica)
      : KernelBuilder(module.getContext()), module(module), func(func),
        analysis(analysis), batchDims(analysis.batchDims),
        position(analysis.position), replica(replica) {}

  mlir::LogicalResult run();

  /// The step run() built.
  exec::StepOp getStep() const { return step; }
  /// The nn values each exec.arena of the step holds (the value that
  /// allocated it first, then its views and the values updated in place in
  /// it; none for a kernel's workspace), by exec.arena.
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Value>>
  getArenaValues() const;

  // KernelBuilder's buffers.
  mlir::Value buffer(mlir::Value value) const override {
    return buffers.lookup(value);
  }
  mlir::Value allocate(mlir::Value value) override;
  mlir::Value allocateWorkspace(int64_t bytes) override;
  mlir::LogicalResult view(mlir::Value value, mlir::Value source) override {
    return addView(value, source, std::nullopt);
  }
  mlir::LogicalResult viewRange(mlir::Value value, mlir::Value source,
                                int64_t offset) override {
    return addView(value, source, offset);
  }
  mlir::LogicalResult inPlace(mlir::Value value, mlir::Value operand) override;
  mlir::LogicalResult joinBuffer(mlir::Value value, mlir::Value input) override;
  mlir::LogicalResult constantBuffer(mlir::Value value,
                                     mlir::DenseElementsAttr contents) override;
  bool onCudaDevice() const override {
    return analysis.partitioned() &&
           llvm::StringRef(analysis.devices[replica]).starts_with("cuda:");
  }

private:
  /// An exec.view of `source`'s buffer for `value` (a range from element
  /// `offset` on when given).
  mlir::LogicalResult addView(mlir::Value value, mlir::Value source,
                              std::optional<int64_t> offset);
  /// `value` lives in `source`, a buffer of another value.
  void shareBuffer(mlir::Value value, mlir::Value source);
  mlir::LogicalResult declareArguments();
  mlir::LogicalResult lowerOp(mlir::Operation *op);
  mlir::LogicalResult declareOutputs();
  /// Records on each arena buffer what it holds, for the memory report
  /// (MemoryReport.h), and on the step the FLOPs recomputation adds.
  void recordArenaHolds();

  /// The memref a tensor value lives in: the batch dim, if any, is `?`.
  mlir::MemRefType bufferType(mlir::Value value) const;
  /// The batch_scale of `value`'s buffer (1 when it holds no batch).
  int64_t batchScaleOf(mlir::Value value) const {
    auto it = batchDims.find(value);
    return it == batchDims.end() ? 1 : it->second.scale;
  }
  /// The symbol of this replica's copy of persistent tensor `name`: replica
  /// d > 0 keeps its own copy, under the same plan name.
  std::string symbolFor(llvm::StringRef name) const {
    return replica == 0 ? name.str()
                        : name.str() + "@" + std::to_string(replica);
  }
  /// Declares this replica's copy of a persistent tensor (once); returns
  /// its symbol.
  llvm::StringRef declarePersistent(llvm::StringRef name,
                                    mlir::RankedTensorType type,
                                    llvm::StringRef kind, llvm::StringRef init,
                                    llvm::StringRef source,
                                    llvm::StringRef parameter,
                                    mlir::ElementsAttr value = {});

  /// This replica's value of a function argument: the argument itself, or
  /// its share from the dist.scatter / dist.replicate that distributes it.
  mlir::Value replicaValue(mlir::BlockArgument arg) const;
  /// Whether `op` belongs to this replica (or to none: the dist ops).
  bool inReplica(mlir::Operation *op) const;
  /// Whether `op` flattens a state argument for the dist.scatter that
  /// shards it: the replicas bind their ranges, nobody the whole.
  bool isStateFlatten(mlir::Operation *op) const;
  /// Where this replica's range starts (elements) in the sharded state
  /// argument `arg`; none if the argument is not sharded.
  std::optional<int64_t> getShardOffset(mlir::BlockArgument arg) const;
  /// The all-gathers (reduce-scatters) of a bucket, lowered in one call.
  mlir::LogicalResult lowerShardedCollective(mlir::Operation *op);
  /// The dist op at the boundary of the replicas.
  mlir::LogicalResult lowerDistOp(mlir::Operation *op);

  mlir::ModuleOp module;
  mlir::func::FuncOp func;
  exec::StepOp step;
  const StepAnalysis &analysis;
  const llvm::DenseMap<mlir::Value, StepAnalysis::BatchDim> &batchDims;
  const llvm::DenseMap<mlir::Operation *, int64_t> &position;
  int64_t replica;
  llvm::DenseMap<mlir::Value, mlir::Value> buffers;
  /// The buffers of each bucket being collected, by its first member (a
  /// sharded collective's: part and whole of each member in turn).
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Value>>
      bucketBuffers;
  /// Arena buffers: the exec.arena op and the values living in it (views
  /// included); none for a kernel's workspace.
  struct ArenaBuffer {
    exec::ArenaOp op;
    llvm::SmallVector<mlir::Value> values;
  };
  std::vector<ArenaBuffer> arena;
  llvm::DenseMap<mlir::Value, size_t>
      arenaIndex; // buffer value -> index into arena
  int64_t currentPosition = 0;
};

} // namespace dpc

#endif // DPC_CODEGEN_STEPLOWERING_H
