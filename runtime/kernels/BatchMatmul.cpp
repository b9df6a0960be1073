//===- BatchMatmul.cpp - Matrix products per leading index ----------------===//

#include "runtime/kernels/BatchMatmul.h"
#include "runtime/kernels/DnnlSupport.h"

#include <stdexcept>

namespace dpc::kernels {

using dnnl::memory;
using Tag = memory::format_tag;

void batchMatmul(KernelContext &context, const BatchMatmulShape &s,
                 const float *a, const float *b, float *c) {
  if (s.batch <= 0 || s.m <= 0 || s.k <= 0 || s.n <= 0)
    throw std::invalid_argument("batch matmul: invalid shape");
  ReductionThreadsScope threads(context);
  auto &ctx = context.getImpl();
  // A transposed operand is its stored [.., cols, rows] read through swapped
  // strides (acb).
  auto descs = [&] {
    return std::vector<memory::desc>{
        plainDesc({s.batch, s.m, s.k}, s.transposeA ? Tag::acb : Tag::abc),
        plainDesc({s.batch, s.k, s.n}, s.transposeB ? Tag::acb : Tag::abc),
        plainDesc({s.batch, s.m, s.n}, Tag::abc)};
  };
  ctx.run({static_cast<int64_t>(PrimitiveKind::BatchMatmul), s.batch, s.m, s.k,
           s.n, s.transposeA ? 1 : 0, s.transposeB ? 1 : 0},
          [&] {
            std::vector<memory::desc> d = descs();
            return dnnl::matmul::primitive_desc(
                dnnl::matmul::desc(d[0], d[1], d[2]), defaultAttr(),
                ctx.engine);
          },
          descs, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
}

} // namespace dpc::kernels
