//===- DistLowering.cpp - the dist ops between a step's replicas ----------===//
//
// The data-parallel ops that the partition pass leaves between the replicas
// of a step, lowered for one replica: a scatter, replicate or gather only
// binds buffers; the all-reduces of a gradient bucket become one AllReduce
// call, which schedule-exec-streams moves to the communication stream.
//
//===----------------------------------------------------------------------===//

#include "codegen/StepLowering.h"

using namespace mlir;
using namespace dpc;

Value StepLowering::replicaValue(BlockArgument arg) const {
  if (!analysis.partitioned())
    return arg;
  for (Operation *user : arg.getUsers())
    if (user->getName().getStringRef() == kScatter ||
        user->getName().getStringRef() == kReplicate)
      return user->getResult(replica);
  return arg; // unused by any replica
}

bool StepLowering::inReplica(Operation *op) const {
  auto attr = op->getAttrOfType<IntegerAttr>(kReplicaAttr);
  return !attr || attr.getInt() == replica;
}

LogicalResult StepLowering::lowerDistOp(Operation *op) {
  StringRef name = op->getName().getStringRef();
  // Scatter and replicate were bound with the arguments; a gather is read
  // by the outputs.
  if (name == kScatter || name == kReplicate || name == kGather)
    return success();
  if (name == kAllReduce) {
    // In place: this replica's part is reduced where it lies, once the last
    // gradient of its bucket exists. A part read again later (a replica's
    // batch-norm gradient sums, which are also its parameter gradients) is
    // reduced in a copy.
    Value mine = op->getOperand(replica);
    if (llvm::any_of(mine.getUsers(), [&](Operation *user) {
          return position.lookup(user) > currentPosition;
        })) {
      Value copy = allocate(op->getResult(replica));
      kernel(plan::Kernel::Copy, {buffer(mine)}, {copy});
    } else if (failed(inPlace(op->getResult(replica), mine))) {
      return failure();
    }
    Value part = buffer(op->getResult(replica));
    const SmallVector<Operation *> &bucket = analysis.bucketOf.lookup(op);
    SmallVector<Value> &members = bucketBuffers[bucket.front()];
    members.push_back(part);
    if (bucket.back() != op)
      return success();
    // One call for the bucket, in program order; schedule-exec-streams
    // moves it to the communication stream.
    exec::KernelOp allReduce = kernel(plan::Kernel::AllReduce, members, {});
    allReduce->setLoc(op->getLoc());
    if (auto reduction = op->getAttrOfType<StringAttr>("reduction"))
      allReduce->setAttr("op", reduction);
    return success();
  }
  return op->emitError() << "cannot be lowered to the plan yet";
}
