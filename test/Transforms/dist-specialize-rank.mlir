// RUN: dist-opt %s --dist-parallel-embedding --dist-specialize-rank="rank=6" --dist-verify-distributions | FileCheck %s --check-prefix=RANK6
// RUN: dist-opt %s --dist-parallel-embedding --dist-specialize-rank="rank=1" | FileCheck %s --check-prefix=RANK1
// RUN: dist-opt %s --dist-specialize-rank="rank=6" | FileCheck %s --check-prefix=COORD

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
#perm = #dist.mesh<shape = [2, 4], process_ids = [7, 6, 5, 4, 3, 2, 1, 0]>

// The brief's case: vocabulary 32000 split over mp (8000 local rows); rank 6
// sits at (1, 2), so start_index = 2 * 8000 = 16000. PIR's formula
// world_rank * vocab / world_size would give 6 * 32000 / 8 = 24000.
// RANK6-LABEL: func.func @embedding_start
// RANK6-NOT: dist.process_coord
// RANK6: %[[START:.*]] = arith.constant 16000 : index
// RANK6: dist.c_embedding %{{.*}}, %{{.*}} start = %[[START]]
// Rank 1 sits at (0, 1): start_index 8000 (PIR: 1 * 32000 / 8 = 4000).
// RANK1-LABEL: func.func @embedding_start
// RANK1: %[[START:.*]] = arith.constant 8000 : index
// RANK1: dist.c_embedding %{{.*}}, %{{.*}} start = %[[START]]
func.func @embedding_start(%ids: tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>,
    %w: tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>)
    -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>> {
  %e = dist.embedding %ids, %w
      : tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>, tensor<8000x64xf32, #dist.tensor<#mesh, [1, -1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  return %e : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
}

// On the permuted mesh, process 6 is at position 1, coordinate (0, 1): the
// coordinate comes from the position in the id list, not from the rank.
// COORD-LABEL: func.func @coords
// COORD-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// COORD-DAG: %[[ONE:.*]] = arith.constant 1 : index
// COORD-DAG: %[[TWO:.*]] = arith.constant 2 : index
// COORD-NOT: dist.process_coord
// COORD: return %[[ONE]], %[[TWO]], %[[ZERO]], %[[ONE]]
func.func @coords() -> (index, index, index, index) {
  %a = dist.process_coord #mesh axis = 0
  %b = dist.process_coord #mesh axis = 1
  %c = dist.process_coord #perm axis = 0
  %d = dist.process_coord #perm axis = 1
  return %a, %b, %c, %d : index, index, index, index
}
