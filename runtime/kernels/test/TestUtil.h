//===- TestUtil.h - Helpers for the kernel tests ----------------*- C++ -*-===//
//
// Random inputs, a projection loss L = sum(dy * y) accumulated in double,
// central finite differences of it, and tolerance-aware comparisons.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_TEST_TESTUTIL_H
#define DPC_RUNTIME_KERNELS_TEST_TESTUTIL_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace dpc::kernels::test {

inline std::vector<float> randomVector(size_t size, uint32_t seed,
                                       float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(size);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// Values at least `gap` apart and at least gap/2 away from zero, shuffled:
/// finite differences with a step below gap/2 never cross a kink of relu or
/// a tie of max pooling.
inline std::vector<float> distinctVector(size_t size, uint32_t seed,
                                         float gap = 0.05f) {
  std::vector<float> v(size);
  for (size_t i = 0; i < size; ++i)
    v[i] = (static_cast<float>(i) - static_cast<float>(size / 2) + 0.5f) * gap;
  std::mt19937 gen(seed);
  std::shuffle(v.begin(), v.end(), gen);
  return v;
}

inline double dot(const std::vector<float> &a, const std::vector<float> &b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    s += static_cast<double>(a[i]) * b[i];
  return s;
}

/// d loss / d input by central differences; `loss` re-runs the forward pass
/// on the current contents of `input`, which is restored afterwards.
template <typename LossFn>
std::vector<double> numericGradient(std::vector<float> &input, LossFn loss,
                                    float step = 1e-2f) {
  std::vector<double> grad(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    float saved = input[i];
    float plus = saved + step, minus = saved - step;
    input[i] = plus;
    double lossPlus = loss();
    input[i] = minus;
    double lossMinus = loss();
    input[i] = saved;
    grad[i] = (lossPlus - lossMinus) /
              (static_cast<double>(plus) - static_cast<double>(minus));
  }
  return grad;
}

/// |actual - expected| <= atol + rtol * |expected|, element by element;
/// reports the first few mismatches with their index.
template <typename A, typename B>
void expectAllNear(const std::vector<A> &actual, const std::vector<B> &expected,
                   double atol, double rtol, const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i];
    double tol = atol + rtol * std::fabs(e);
    if (!(std::fabs(a - e) <= tol)) {
      ADD_FAILURE() << what << "[" << i << "]: got " << a << ", expected " << e
                    << " (tolerance " << tol << ")";
      if (++reported == 5)
        return;
    }
  }
}

/// Gradient check tolerance: finite differences of a float forward pass.
constexpr double kGradAtol = 2e-3;
constexpr double kGradRtol = 1e-2;

} // namespace dpc::kernels::test

#endif // DPC_RUNTIME_KERNELS_TEST_TESTUTIL_H
