//===- MemoryPlanner.h - offsets in one arena from liveness -----*- C++ -*-===//

#ifndef DPC_CODEGEN_MEMORYPLANNER_H
#define DPC_CODEGEN_MEMORYPLANNER_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace dpc {

/// A buffer's size and the program positions of its first write and last
/// read (inclusive).
struct BufferLifetime {
  int64_t size;
  int64_t first;
  int64_t last;
};

struct MemoryPlan {
  std::vector<int64_t> offsets; // one per lifetime, in the given order
  int64_t peakBytes = 0;
};

/// Places every buffer in one arena so that no two buffers alive at the same
/// position overlap; a buffer read by the op that writes another stays alive
/// there, so no kernel's output aliases its input. Greedy: each buffer at
/// the lowest offset that fits, in order of first write (larger first on
/// ties) and, separately, largest first; the smaller arena wins. Offsets
/// are multiples of `alignment`.
MemoryPlan planMemory(llvm::ArrayRef<BufferLifetime> buffers,
                      int64_t alignment = 64);

} // namespace dpc

#endif // DPC_CODEGEN_MEMORYPLANNER_H
