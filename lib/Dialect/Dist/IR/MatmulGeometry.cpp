//===- MatmulGeometry.cpp - the shape rule of a dist matmul ---------------===//

#include "dist/Dialect/Dist/IR/MatmulGeometry.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dist;

std::optional<SmallVector<int64_t>>
matmul::resultShape(ArrayRef<int64_t> xs, ArrayRef<int64_t> ys, bool transposeX,
                    bool transposeY, llvm::raw_ostream &why) {
  unsigned xr = xs.size(), yr = ys.size();
  if (xr < 2 || yr < 2) {
    why << "operands must have rank >= 2, got ranks " << xr << " and " << yr;
    return std::nullopt;
  }
  int64_t m = xs[rowDim(xr, transposeX)];
  int64_t kx = xs[colDim(xr, transposeX)];
  int64_t ky = ys[rowDim(yr, transposeY)];
  int64_t n = ys[colDim(yr, transposeY)];
  if (!ShapedType::isDynamic(kx) && !ShapedType::isDynamic(ky) && kx != ky) {
    why << "contraction sizes differ: x has " << kx << ", y has " << ky;
    return std::nullopt;
  }
  ArrayRef<int64_t> xb = xs.take_front(batchRank(xr)),
                    yb = ys.take_front(batchRank(yr));
  size_t batch = std::max(xb.size(), yb.size());
  SmallVector<int64_t> shape(batch);
  for (size_t i = 0; i < batch; ++i) {
    // Align the batch dims from the right, as numpy broadcasting does.
    int64_t a = i + xb.size() >= batch ? xb[i + xb.size() - batch] : 1;
    int64_t b = i + yb.size() >= batch ? yb[i + yb.size() - batch] : 1;
    if (a == 1)
      shape[i] = b;
    else if (b == 1 || a == b)
      shape[i] = a;
    else if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b))
      shape[i] = ShapedType::isDynamic(a) ? b : a;
    else {
      why << "batch dims of x " << shapeString(xb) << " and y "
          << shapeString(yb) << " do not broadcast";
      return std::nullopt;
    }
  }
  shape.push_back(m);
  shape.push_back(n);
  return shape;
}
