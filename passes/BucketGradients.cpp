//===- BucketGradients.cpp - group gradient all-reduces into buckets ------===//
//
// One all-reduce per gradient wastes latency on small tensors; one for all
// of them waits for the whole backward pass. Like DDP, group the gradients
// in the order the backward pass produces them: the first bucket small, so
// communication starts early, the rest `bucket-mb` each. Each bucket is
// reduced as one collective once its last gradient exists (codegen).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/BuiltinTypes.h"

namespace dpc {
#define GEN_PASS_DEF_BUCKETGRADIENTS
#include "passes/Passes.h.inc"
} // namespace dpc

using namespace mlir;

namespace {

struct BucketGradientsPass
    : public dpc::impl::BucketGradientsBase<BucketGradientsPass> {
  using BucketGradientsBase::BucketGradientsBase;

  void runOnOperation() override {
    if (firstBucketMb <= 0 || bucketMb <= 0) {
      getOperation().emitError() << "bucket sizes must be > 0 MB";
      return signalPassFailure();
    }
    bucketCollectives("dist.all_reduce");
    bucketCollectives("dist.all_gather");
    bucketCollectives("dist.reduce_scatter");
  }

private:
  /// Buckets every collective named `name`, in program order.
  void bucketCollectives(StringRef name) {
    Builder builder(&getContext());
    // Buckets a pass made itself stay; new numbers follow theirs.
    int64_t bucket = 0;
    getOperation().walk([&](Operation *op) {
      if (auto made = op->getAttrOfType<IntegerAttr>("bucket");
          made && op->getName().getStringRef() == name)
        bucket = std::max(bucket, made.getInt() + 1);
    });
    double filled = 0, capacity = firstBucketMb * 1024 * 1024;
    getOperation().walk([&](Operation *op) {
      if (op->getName().getStringRef() != name || op->getNumOperands() == 0 ||
          op->hasAttr("bucket"))
        return;
      // Batch-norm statistics stall the step until reduced: never hold them
      // back for a bucket to fill.
      if (op->hasAttr("dist.statistics"))
        return;
      // The bytes one replica sends or receives: an all-reduce's or a
      // reduce-scatter's (whole) operand, an all-gather's (whole) result.
      auto type = cast<RankedTensorType>(name == "dist.all_gather"
                                             ? op->getResult(0).getType()
                                             : op->getOperand(0).getType());
      double bytes = double(type.getNumElements()) *
                     ((type.getElementTypeBitWidth() + 7) / 8);
      if (filled > 0 && filled + bytes > capacity) {
        ++bucket;
        filled = 0;
        capacity = bucketMb * 1024 * 1024;
      }
      op->setAttr("bucket", builder.getI64IntegerAttr(bucket));
      filled += bytes;
    });
  }
};

} // namespace
