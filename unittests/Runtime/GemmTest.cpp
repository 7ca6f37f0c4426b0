//===- GemmTest.cpp - the runtime's dist_gemm_* on every layout -----------===//
//
// --dist-contractions-to-blas hands the runtime strided views: transposed,
// padded, sliced across both dims, broadcast, of size 0 or 1. Each must give
// the product a plain loop gives, whether BLAS takes the view as it is, as a
// transpose, or only after a copy.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <vector>

namespace {
/// How a test lays a rows x cols matrix out in its buffer.
enum class Layout { RowMajor, ColMajor, Padded, EveryOther, Broadcast };

template <typename T> struct Matrix {
  std::vector<T> buffer;
  DistMemRef2D ref{};

  Matrix(int64_t rows, int64_t cols, Layout layout, std::mt19937 &rng) {
    int64_t rs = cols, cs = 1, size = rows * cols;
    switch (layout) {
    case Layout::RowMajor:
      break;
    case Layout::ColMajor:
      rs = 1, cs = rows;
      break;
    case Layout::Padded:
      rs = cols + 3, size = rows * rs;
      break;
    case Layout::EveryOther:
      rs = 2 * cols * 2, cs = 2, size = rows * rs;
      break;
    case Layout::Broadcast:
      rs = 0, size = cols;
      break;
    }
    // A guard band on both sides: writes outside the view show up there.
    buffer.assign(size + 16, T(-7));
    std::uniform_int_distribution<int> values(-4, 4);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        buffer[8 + r * rs + c * cs] = T(values(rng)) / T(4);
    ref = {buffer.data(), buffer.data(), 8, {rows, cols}, {rs, cs}};
  }

  T at(int64_t r, int64_t c) const {
    return buffer[ref.offset + r * ref.strides[0] + c * ref.strides[1]];
  }
};

constexpr Layout kLayouts[] = {Layout::RowMajor, Layout::ColMajor,
                               Layout::Padded, Layout::EveryOther};

template <typename T>
void checkProduct(int64_t m, int64_t n, int64_t k, Layout la, Layout lb,
                  Layout lc, bool accumulate, std::mt19937 &rng) {
  Matrix<T> a(m, k, la, rng), b(k, n, lb, rng), c(m, n, lc, rng);
  std::vector<T> before = c.buffer;
  if (!accumulate)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col)
        c.buffer[c.ref.offset + r * c.ref.strides[0] + col * c.ref.strides[1]] =
            NAN;
  if constexpr (sizeof(T) == 4)
    _mlir_ciface_dist_gemm_f32(&a.ref, &b.ref, &c.ref, accumulate);
  else
    _mlir_ciface_dist_gemm_f64(&a.ref, &b.ref, &c.ref, accumulate);
  std::vector<bool> inView(c.buffer.size());
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col) {
      size_t place =
          c.ref.offset + r * c.ref.strides[0] + col * c.ref.strides[1];
      inView[place] = true;
      // Quarters times quarters summed: exact in f32 at these sizes.
      T want = accumulate ? before[place] : T(0);
      for (int64_t i = 0; i < k; ++i)
        want += a.at(r, i) * b.at(i, col);
      ASSERT_EQ(c.buffer[place], want)
          << m << "x" << n << "x" << k << " layouts " << int(la) << int(lb)
          << int(lc) << " accumulate " << accumulate << " at " << r << ","
          << col;
    }
  for (size_t i = 0; i < c.buffer.size(); ++i)
    if (!inView[i])
      ASSERT_EQ(c.buffer[i], before[i]) << "wrote outside the view at " << i;
}

TEST(DistGemm, EveryLayoutOfEveryOperand) {
  std::mt19937 rng(20261203);
  for (Layout la : kLayouts)
    for (Layout lb : kLayouts)
      for (Layout lc : kLayouts)
        for (bool accumulate : {false, true}) {
          checkProduct<float>(5, 7, 3, la, lb, lc, accumulate, rng);
          checkProduct<double>(4, 6, 9, la, lb, lc, accumulate, rng);
        }
}

TEST(DistGemm, BroadcastOperands) {
  std::mt19937 rng(1);
  checkProduct<float>(6, 5, 4, Layout::Broadcast, Layout::RowMajor,
                      Layout::RowMajor, true, rng);
  checkProduct<float>(6, 5, 4, Layout::RowMajor, Layout::Broadcast,
                      Layout::ColMajor, false, rng);
}

TEST(DistGemm, DegenerateSizes) {
  std::mt19937 rng(2);
  for (Layout l : kLayouts)
    for (bool accumulate : {false, true}) {
      // An empty sum: C is zeroed, or left as it is.
      checkProduct<float>(3, 4, 0, l, l, l, accumulate, rng);
      checkProduct<double>(0, 4, 3, l, l, l, accumulate, rng);
      checkProduct<float>(3, 0, 3, l, l, l, accumulate, rng);
      // Size-1 dims, whose strides BLAS must not be given as they are.
      checkProduct<float>(1, 1, 1, l, l, l, accumulate, rng);
      checkProduct<float>(1, 5, 3, l, Layout::ColMajor, l, accumulate, rng);
      checkProduct<double>(5, 1, 3, Layout::ColMajor, l, l, accumulate, rng);
      checkProduct<float>(4, 6, 1, l, l, Layout::ColMajor, accumulate, rng);
    }
}

TEST(DistGemm, LargeEnoughForBlockedKernels) {
  std::mt19937 rng(3);
  checkProduct<float>(67, 129, 65, Layout::RowMajor, Layout::ColMajor,
                      Layout::Padded, true, rng);
  checkProduct<double>(130, 33, 70, Layout::ColMajor, Layout::RowMajor,
                       Layout::ColMajor, false, rng);
}

TEST(DistGemmDeathTest, SizesThatDoNotAgree) {
  // OpenBLAS has started its threads: fork and re-run the test.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::mt19937 rng(4);
  Matrix<float> a(3, 4, Layout::RowMajor, rng), b(5, 2, Layout::RowMajor, rng),
      c(3, 2, Layout::RowMajor, rng);
  EXPECT_DEATH(_mlir_ciface_dist_gemm_f32(&a.ref, &b.ref, &c.ref, 1),
               "dist_gemm_f32: a 3 x 4 times a 5 x 2 matrix into a 3 x 2 one");
}
} // namespace
