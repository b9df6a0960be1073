//===- DistLowering.cpp - the dist ops between a step's replicas ----------===//
//
// The data-parallel ops that the partition pass leaves between the replicas
// of a step, lowered for one replica: a scatter, replicate or gather only
// binds buffers; the all-reduces of a gradient bucket become one AllReduce
// call, and the all-gathers (reduce-scatters) of a bucket one AllGather
// (ReduceScatter) call, which schedule-exec-streams moves to the
// communication stream. Sharded
// optimizer state (dpc-shard-optimizer-state) is a scatter of a state
// argument, flattened first: each replica keeps its range as its own
// persistent tensor (a shard), nobody the flattened whole.
//
//===----------------------------------------------------------------------===//

#include "codegen/StepLowering.h"
#include "ir/nn/NNOps.h"

using namespace mlir;
using namespace dpc;

namespace {

/// The dist.scatter or dist.replicate that distributes `arg`, directly or
/// after flattening it (sharded state); null if none does.
Operation *getDistribution(BlockArgument arg) {
  for (Operation *user : arg.getUsers()) {
    StringRef name = user->getName().getStringRef();
    if (name == kScatter || name == kReplicate)
      return user;
    if (isa<nn::ReshapeOp>(user) && !user->hasAttr(kReplicaAttr))
      for (Operation *next : user->getUsers())
        if (next->getName().getStringRef() == kScatter)
          return next;
  }
  return nullptr;
}

} // namespace

Value StepLowering::replicaValue(BlockArgument arg) const {
  if (!analysis.partitioned())
    return arg;
  if (Operation *distribution = getDistribution(arg))
    return distribution->getResult(replica);
  return arg; // unused by any replica
}

bool StepLowering::inReplica(Operation *op) const {
  auto attr = op->getAttrOfType<IntegerAttr>(kReplicaAttr);
  return !attr || attr.getInt() == replica;
}

bool StepLowering::isStateFlatten(Operation *op) const {
  return analysis.partitioned() && isa<nn::ReshapeOp>(op) &&
         !op->hasAttr(kReplicaAttr) && isa<BlockArgument>(op->getOperand(0)) &&
         llvm::all_of(op->getUsers(), [](Operation *user) {
           return user->getName().getStringRef() == kScatter;
         });
}

std::optional<int64_t> StepLowering::getShardOffset(BlockArgument arg) const {
  Operation *distribution =
      analysis.partitioned() ? getDistribution(arg) : nullptr;
  if (!distribution || distribution->getName().getStringRef() != kScatter)
    return std::nullopt;
  auto sizes = distribution->getAttrOfType<DenseI64ArrayAttr>("sizes");
  int64_t offset = 0;
  for (int64_t size : sizes.asArrayRef().take_front(replica))
    offset += size;
  return offset;
}

/// The element count of a tensor value.
static int64_t getNumElements(Value value) {
  return cast<RankedTensorType>(value.getType()).getNumElements();
}

/// Whether `value`, or the gradient it flattens, is read after `op`.
static bool isReadAfter(Value value, Operation *op,
                        const DenseMap<Operation *, int64_t> &position) {
  SmallVector<Value> values = {value};
  if (auto flatten = value.getDefiningOp<nn::ReshapeOp>())
    values.push_back(flatten.getInput());
  int64_t at = position.lookup(op);
  return llvm::any_of(values, [&](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      return position.lookup(user) > at;
    });
  });
}

LogicalResult StepLowering::lowerShardedCollective(Operation *op) {
  bool gather = op->getName().getStringRef() == kAllGather;
  Value part = gather ? op->getOperand(replica) : op->getResult(replica);
  Value whole = gather ? op->getResult(replica) : op->getOperand(replica);
  if (gather) {
    // This replica's whole lies where its part is a range of it at the
    // part's offset (the flattened parameter an update wrote a range of):
    // the gather is in place. Elsewhere a new buffer.
    int64_t offset = 0;
    for (Value before : op->getOperands().take_front(replica))
      offset += getNumElements(before);
    auto range = buffer(part).getDefiningOp<exec::ViewOp>();
    if (range && range.getOffset() == uint64_t(offset) &&
        range.getSource().getType() == bufferType(whole))
      shareBuffer(whole, range.getSource());
    else
      allocate(whole);
  } else {
    // The reduction runs in the whole (the gradient, dead after it unless
    // read again: then in a copy); the part is the replica's own buffer,
    // so the whole gradient's bytes are free once it is reduced.
    if (isReadAfter(whole, op, position)) {
      Value source = buffer(whole);
      kernel(plan::Kernel::Copy, {source}, {allocate(whole)});
    }
    allocate(part);
  }
  const SmallVector<Operation *> &bucket = analysis.bucketOf.lookup(op);
  SmallVector<Value> &members = bucketBuffers[bucket.front()];
  members.push_back(buffer(part));
  members.push_back(buffer(whole));
  if (bucket.back() != op)
    return success();
  // One call for the bucket: every replica's part size of each member.
  SmallVector<Value> parts, wholes;
  for (size_t i = 0; i < members.size(); i += 2) {
    parts.push_back(members[i]);
    wholes.push_back(members[i + 1]);
  }
  SmallVector<int64_t> sizes;
  for (Operation *member : bucket)
    for (Value memberPart :
         gather ? ValueRange(member->getOperands()) : member->getResults())
      sizes.push_back(getNumElements(memberPart));
  SmallVector<NamedAttribute> attrs = {
      attr("sizes", builder.getDenseI64ArrayAttr(sizes))};
  if (!gather)
    if (auto reduction = op->getAttrOfType<StringAttr>("reduction"))
      attrs.push_back(attr("op", reduction));
  exec::KernelOp collective =
      gather ? kernel(plan::Kernel::AllGather, parts, wholes, attrs)
             : kernel(plan::Kernel::ReduceScatter, wholes, parts, attrs);
  collective->setLoc(op->getLoc());
  return success();
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
  if (name == kAllGather || name == kReduceScatter)
    return lowerShardedCollective(op);
  return op->emitError() << "cannot be lowered to the plan yet";
}
