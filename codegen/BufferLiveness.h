//===- BufferLiveness.h - arena buffers of a planned exec step --*- C++ -*-===//
//
// What passes over planned `exec` steps need to know of the arena: the
// bytes a buffer occupies, when each buffer is alive, and where a new
// short-lived buffer fits without touching a live one.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_CODEGEN_BUFFERLIVENESS_H
#define DPC_CODEGEN_BUFFERLIVENESS_H

#include "codegen/MemoryPlanner.h"
#include "ir/exec/ExecOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace dpc {

/// The arena bytes [begin, end) a buffer (or a view of one) occupies at the
/// step's compiled batch, or none when it is not in the arena (an input,
/// training state).
std::optional<std::pair<int64_t, int64_t>> getArenaBytes(mlir::Value buffer,
                                                         int64_t batch);

/// Bytes of `buffer` at a step batch of `batch`.
int64_t getBufferBytes(mlir::Value buffer, int64_t batch);

/// When one arena buffer of a step is alive: positions are the step's ops
/// in order; a buffer lives from its first user to its last (views' users
/// included; to the end when something other than a kernel reads it, an
/// exec.output). A buffer no op but views uses (`used` false) lives at its
/// own position.
struct ArenaLifetime {
  exec::ArenaOp op;
  int64_t bytes = 0;
  int64_t first = 0;
  int64_t last = 0;
  bool used = true;
  bool liveAt(int64_t position) const {
    return first <= position && position <= last;
  }
};

/// The lifetime of every exec.arena of `step`, in program order. Arena
/// planning, the memory report, rematerialization's budget and the passes
/// that add buffers to a planned arena all read the arena through this.
std::vector<ArenaLifetime> getArenaLifetimes(exec::StepOp step);

/// The first position where the most bytes of `lifetimes` are alive, and
/// how many (0 and 0 when there are none).
std::pair<int64_t, int64_t>
getLivePeak(llvm::ArrayRef<ArenaLifetime> lifetimes);

/// Offsets for `lifetimes` in one arena (MemoryPlanner.h's planMemory), in
/// their order, and the arena's size.
MemoryPlan planArena(llvm::ArrayRef<ArenaLifetime> lifetimes);

/// The liveness of a planned step's arena buffers (getArenaLifetimes at
/// their planned offsets), to place new short-lived buffers.
class ArenaLiveness {
public:
  explicit ArenaLiveness(exec::StepOp step);

  int64_t getPosition(mlir::Operation *op) const {
    return positions.lookup(op);
  }
  /// The lowest offset, 64-byte aligned, where a buffer like `like`, alive
  /// at `position` only, overlaps no buffer alive there; it is recorded as
  /// alive there from now on.
  int64_t placeAt(int64_t position, mlir::Value like);
  /// The arena the step needs with the buffers placed.
  int64_t getArenaBytes() const { return arenaBytes; }

private:
  struct Interval {
    int64_t first, last, begin, end;
  };
  int64_t batch;
  int64_t arenaBytes;
  llvm::DenseMap<mlir::Operation *, int64_t> positions;
  std::vector<Interval> intervals;
};

} // namespace dpc

#endif // DPC_CODEGEN_BUFFERLIVENESS_H
