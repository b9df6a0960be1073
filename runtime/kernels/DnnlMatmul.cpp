//===- DnnlMatmul.cpp - oneDNN matmul over plain row-major data -----------===//

#include "runtime/kernels/DnnlMatmul.h"

#include <stdexcept>
#include <vector>

namespace dpc::kernels {

using dnnl::memory;
using Tag = memory::format_tag;

void runDnnlMatmul(KernelContext::Impl &ctx, const MatmulProblem &p,
                   const float *a, const float *b, float *c) {
  if (p.batch <= 0 || p.rows <= 0 || p.inner <= 0 || p.cols <= 0)
    throw std::invalid_argument("matmul: invalid shape");
  // 2-D for one product, else [batch, ., .] with the transposes as swapped
  // strides of the last two dims.
  auto desc = [&](int64_t outer, int64_t inner, bool transposed) {
    if (p.batch == 1)
      return plainDesc({outer, inner}, transposed ? Tag::ba : Tag::ab);
    return plainDesc({p.batch, outer, inner}, transposed ? Tag::acb : Tag::abc);
  };
  auto descs = [&] {
    return std::vector<memory::desc>{desc(p.rows, p.inner, p.aTransposed),
                                     desc(p.inner, p.cols, p.bTransposed),
                                     desc(p.rows, p.cols, false)};
  };
  ctx.run({static_cast<int64_t>(PrimitiveKind::Matmul), p.batch, p.rows,
           p.inner, p.cols, p.aTransposed ? 1 : 0, p.bTransposed ? 1 : 0,
           static_cast<int64_t>(p.precision)},
          [&] {
            std::vector<memory::desc> d = descs();
            return dnnl::matmul::primitive_desc(
                dnnl::matmul::desc(lowDesc(d[0], p.precision),
                                   lowDesc(d[1], p.precision), d[2]),
                defaultAttr(), ctx.engine);
          },
          descs, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
}

} // namespace dpc::kernels
