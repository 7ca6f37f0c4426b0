//===- Gemm.cpp - matrix products through BLAS ----------------------------===//
//
// --dist-contractions-to-blas turns every f32/f64 contraction into calls of
// dist_gemm_*, one per 2-D product, on strided views of the operands. BLAS
// takes a matrix whose rows or columns are contiguous; a view with neither
// (a slice across the inner dim, a broadcast) is copied first, and a result
// stored column by column is computed as its transpose, c^T = b^T a^T.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include "RuntimeSupport.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <vector>

#ifdef DIST_HAVE_CBLAS
#include <cblas.h>
#endif

using namespace dist_runtime;

namespace {
/// A rows x cols matrix, element (r, c) at data[r * rowStride + c * colStride].
template <typename T> struct View {
  T *data;
  int64_t rows, cols, rowStride, colStride;

  View transposed() const { return {data, cols, rows, colStride, rowStride}; }
  T &at(int64_t r, int64_t c) const {
    return data[r * rowStride + c * colStride];
  }
};

template <typename T> View<T> viewOf(const DistMemRef2D *m) {
  return {static_cast<T *>(m->aligned) + m->offset, m->sizes[0], m->sizes[1],
          m->strides[0], m->strides[1]};
}

/// The leading dimension BLAS reads `v` with as an untransposed row-major
/// matrix, or 0 when its rows are not contiguous. The stride of a dim of
/// size 1 is never used, so it does not count.
template <typename T> int64_t rowMajorLd(const View<T> &v) {
  int64_t rowLength = std::max<int64_t>(1, v.cols);
  if ((v.colStride != 1 && v.cols != 1) ||
      (v.rows != 1 && v.rowStride < rowLength))
    return 0;
  return v.rows == 1 ? rowLength : v.rowStride;
}

/// How BLAS reads `v` as a row-major matrix: untransposed with leading
/// dimension `ld`, or transposed (its columns contiguous); false when
/// neither holds or `ld` does not fit BLAS's int.
template <typename T>
bool rowMajorForm(const View<T> &v, bool &transposed, int64_t &ld) {
  ld = rowMajorLd(v);
  transposed = ld == 0;
  if (transposed)
    ld = rowMajorLd(v.transposed());
  return ld != 0 && ld <= INT_MAX;
}

template <typename T> void copy(const View<T> &from, const View<T> &to) {
  for (int64_t r = 0; r < from.rows; ++r)
    for (int64_t c = 0; c < from.cols; ++c)
      to.at(r, c) = from.at(r, c);
}

/// A contiguous row-major copy of `v`, which `storage` owns.
template <typename T>
View<T> contiguous(const View<T> &v, std::vector<T> &storage) {
  storage.resize(static_cast<size_t>(v.rows * v.cols));
  View<T> result{storage.data(), v.rows, v.cols, v.cols, 1};
  copy(v, result);
  return result;
}

/// The product without BLAS: c's rows in order, k in the middle so that
/// the inner loop runs along b's and c's rows.
template <typename T>
void loops(const View<T> &a, const View<T> &b, const View<T> &c,
           bool accumulate) {
  for (int64_t i = 0; i < c.rows; ++i) {
    if (!accumulate)
      for (int64_t j = 0; j < c.cols; ++j)
        c.at(i, j) = T(0);
    for (int64_t k = 0; k < a.cols; ++k) {
      T aik = a.at(i, k);
      for (int64_t j = 0; j < c.cols; ++j)
        c.at(i, j) += aik * b.at(k, j);
    }
  }
}

#ifdef DIST_HAVE_CBLAS
/// OpenBLAS starts a thread per core unless told otherwise; dist-run and
/// mpirun start a process per core, so threads would only compete.
void limitThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!std::getenv("OPENBLAS_NUM_THREADS") && !std::getenv("OMP_NUM_THREADS"))
      openblas_set_num_threads(1);
  });
}

void blas(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
          const float *a, int lda, const float *b, int ldb, float beta,
          float *c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c,
              ldc);
}
void blas(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
          const double *a, int lda, const double *b, int ldb, double beta,
          double *c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c,
              ldc);
}
#endif

template <typename T>
void gemm(View<T> a, View<T> b, View<T> c, bool accumulate) {
#ifdef DIST_HAVE_CBLAS
  bool fits = c.rows <= INT_MAX && c.cols <= INT_MAX && a.cols <= INT_MAX;
  bool ct = false;
  int64_t ldc = 0;
  if (fits && !rowMajorForm(c, ct, ldc)) {
    // Neither c's rows nor its columns are contiguous: compute into a copy.
    std::vector<T> storage;
    View<T> packed = contiguous(c, storage);
    gemm(a, b, packed, accumulate);
    copy(packed, c);
    return;
  }
  if (fits && ct)
    return gemm(b.transposed(), a.transposed(), c.transposed(), accumulate);
  if (fits) {
    limitThreads();
    std::vector<T> aCopy, bCopy;
    bool at = false, bt = false;
    int64_t lda = 0, ldb = 0;
    if (!rowMajorForm(a, at, lda))
      rowMajorForm(a = contiguous(a, aCopy), at, lda);
    if (!rowMajorForm(b, bt, ldb))
      rowMajorForm(b = contiguous(b, bCopy), bt, ldb);
    blas(at ? CblasTrans : CblasNoTrans, bt ? CblasTrans : CblasNoTrans,
         int(c.rows), int(c.cols), int(a.cols), a.data, int(lda), b.data,
         int(ldb), accumulate ? T(1) : T(0), c.data, int(ldc));
    return;
  }
#endif
  loops(a, b, c, accumulate);
}

/// How a product with a collective in flight is cut: into about kBlocks
/// row blocks of c, each of at least kMinBlockRows rows (fewer rows per
/// BLAS call cost BLAS its speed).
constexpr int64_t kBlocks = 16;
constexpr int64_t kMinBlockRows = 16;

template <typename T>
void gemmEntry(DistMemRef2D *a, DistMemRef2D *b, DistMemRef2D *c,
               int64_t accumulate, const char *name) {
  View<T> va = viewOf<T>(a), vb = viewOf<T>(b), vc = viewOf<T>(c);
  if (va.rows != vc.rows || vb.cols != vc.cols || va.cols != vb.rows ||
      va.rows < 0 || vb.cols < 0 || va.cols < 0)
    fatalf("%s: a %lld x %lld times a %lld x %lld matrix into a %lld x %lld "
           "one",
           name, (long long)va.rows, (long long)va.cols, (long long)vb.rows,
           (long long)vb.cols, (long long)vc.rows, (long long)vc.cols);
  if (vc.rows == 0 || vc.cols == 0)
    return;
  // An empty sum (K = 0), which BLAS is not given: c is zeroed or left.
  if (va.cols == 0)
    return loops(va, vb, vc, accumulate != 0);
  if (!progressPolls() || !requestsInFlight() || vc.rows < 2 * kMinBlockRows)
    return gemm(va, vb, vc, accumulate != 0);
  // A collective is in flight: the product runs as row blocks of c, and
  // MPI moves the collective's data between them, so that it overlaps the
  // product instead of waiting for the next MPI call.
  int64_t rows = std::max(kMinBlockRows, (vc.rows + kBlocks - 1) / kBlocks);
  for (int64_t r = 0; r < vc.rows; r += rows) {
    int64_t n = std::min(rows, vc.rows - r);
    View<T> a = va, c = vc;
    a.data += r * va.rowStride;
    c.data += r * vc.rowStride;
    a.rows = c.rows = n;
    gemm(a, vb, c, accumulate != 0);
    progress();
  }
}
} // namespace

extern "C" void _mlir_ciface_dist_gemm_f32(DistMemRef2D *a, DistMemRef2D *b,
                                           DistMemRef2D *c,
                                           int64_t accumulate) {
  gemmEntry<float>(a, b, c, accumulate, "dist_gemm_f32");
}

extern "C" void _mlir_ciface_dist_gemm_f64(DistMemRef2D *a, DistMemRef2D *b,
                                           DistMemRef2D *c,
                                           int64_t accumulate) {
  gemmEntry<double>(a, b, c, accumulate, "dist_gemm_f64");
}
