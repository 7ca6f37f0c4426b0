// The shipped example parses, verifies and round-trips (text, generic and
// bytecode forms).
// RUN: dist-opt %examples/gpt_block.mlir --verify-roundtrip | FileCheck %s --check-prefix=PARSE
// RUN: dist-opt %examples/gpt_block.mlir --mlir-print-op-generic | dist-opt | FileCheck %s --check-prefix=PARSE
// PARSE: #mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
// PARSE-LABEL: func.func @train_step
// PARSE-COUNT-2: dist.matmul_grad
// PARSE: return

// The README's main command: the whole --dist-auto-parallel pipeline.
// RUN: dist-opt %examples/gpt_block.mlir --dist-auto-parallel | FileCheck %s
// The pipeline's result verifies and round-trips too.
// RUN: dist-opt %examples/gpt_block.mlir --dist-auto-parallel | dist-opt --verify-roundtrip | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> ({{.*}}, tensor<1xi1, #dist.tensor<#mesh, [-1]>> {dist.found_inf})
// Vocab-parallel embedding, start_index from this process's mp coordinate.
// CHECK:      %[[C:.*]] = dist.process_coord #mesh axis = 1
// CHECK:      %[[START:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK-NEXT: %[[E:.*]] = dist.c_embedding %arg0, %arg1 start = %[[START]] : {{.*}} -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>
// The forward allreduces stay on the compute stream: only a dropout's seed,
// which does no work to overlap with, comes before their first use.
// CHECK-NEXT: %[[EMB:.*]] = dist.allreduce %[[E]] on #mesh axes = [1] reduce = sum : {{.*}} -> tensor<
// Dropout seeds: fixed 11 for the embedding dropout, run-time for the other.
// CHECK-NEXT: %[[S11:.*]] = dist.seed 11 : tensor<1xi32, #dist.tensor<#mesh, [-1]>>
// CHECK-NEXT: %[[H0:.*]] = dist.dropout %[[EMB]] seed(%[[S11]] : {{.*}}) prob = 1.000000e-01 {id = "emb_drop"}
// CHECK:      %[[OUT:.*]] = dist.allreduce {{.*}} axes = [1] reduce = sum : {{.*}} -> tensor<
// CHECK-NEXT: %[[S0:.*]] = dist.seed 0 : tensor<1xi32, #dist.tensor<#mesh, [-1]>>
// CHECK-NEXT: dist.dropout %[[OUT]] seed(%[[S0]] : {{.*}}) prob = 1.000000e-01 {id = "out_drop"}
// CHECK-NEXT: dist.dropout %arg4 seed(%[[S0]] : {{.*}}) prob = 1.000000e-01 {recompute_of = "out_drop"}
// The row-parallel matmul_grad stays; the column-parallel one is split, its
// allreduce on the mp stream before the dW matmul, waited for after it.
// CHECK-NEXT: %[[DH1:.*]], %{{.*}} = dist.matmul_grad
// CHECK-NEXT: %[[DX:.*]] = dist.matmul %[[DH1]], %arg2 transpose_y
// CHECK-NEXT: %[[DF:.*]] = dist.allreduce %[[DX]] on #mesh axes = [1] reduce = sum stream = mp
// CHECK-NEXT: tensor.collapse_shape %[[H0]]
// CHECK-NEXT: tensor.collapse_shape %[[DH1]]
// CHECK-NEXT: dist.matmul {{.*}} transpose_x
// CHECK-NEXT: %[[DH0:.*]] = dist.wait %[[DF]]
// CHECK-NEXT: dist.dropout %[[DH0]] seed(%[[S11]] : {{.*}}) prob = 1.000000e-01 {recompute_of = "emb_drop"}
// The embedding backward: c_identity, c_embedding_grad, dp average (used
// by the next op, so on the compute stream).
// CHECK:      dist.c_identity %{{.*}} on #mesh axes = [1] :
// CHECK-NEXT: dist.c_embedding_grad {{.*}} start = %{{.*}} : {{.*}} -> tensor<256x64xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>
// CHECK-NEXT: dist.allreduce {{.*}} axes = [0] reduce = sum :
// CHECK-NEXT: dist.scale {{.*}} by 5.000000e-01
// AMP after the last gradient, found_inf agreed on over the whole mesh.
// CHECK:      %[[U:.*]]:3, %[[INF:.*]] = dist.check_finite_and_unscale {{.*}} scale %arg5
// CHECK-NEXT: arith.extui %[[INF]]
// CHECK-NEXT: dist.allreduce {{.*}} axes = [0, 1] reduce = max :
// CHECK-NEXT: %[[F:.*]] = arith.trunci
// CHECK-NEXT: return %{{.*}}, %[[U]]#0, %[[U]]#1, %[[U]]#2, %[[F]]
// CHECK-NOT:  dist.embedding
// CHECK-NOT:  fix_seed
// Parameter init sync of the embedding table along dp.
// CHECK-LABEL: func.func @startup
// CHECK-SAME: attributes {dist.startup}
// CHECK-NEXT: %[[B:.*]] = dist.broadcast %arg0 on #mesh axes = [0] root = 0
// CHECK-NEXT: return %[[B]]

// Options reach the passes: the avg allreduce replaces sum + scale, and
// remarks explain the matmul_grad that was not split.
// RUN: dist-opt %examples/gpt_block.mlir --dist-auto-parallel="use-avg-allreduce=true remarks=true" 2>&1 | FileCheck %s --check-prefix=OPTS
// OPTS: remark: not split: x_grad is not reduced by a dist.allreduce or dist.reduce_scatter
// OPTS: dist.c_embedding_grad {{.*}} partial = [0 : sum]
// OPTS-NEXT: dist.allreduce {{.*}} axes = [0] reduce = avg

// Specialised for rank 6 (coordinate (1, 2)): start_index = 2 * 256 = 512.
// RUN: dist-opt %examples/gpt_block.mlir --dist-auto-parallel --dist-specialize-rank=rank=6 | FileCheck %s --check-prefix=RANK6
// RANK6-LABEL: func.func @train_step
// RANK6-NOT:   dist.process_coord
// RANK6:       %[[S:.*]] = arith.constant 512 : index
// RANK6:       dist.c_embedding %arg0, %arg1 start = %[[S]]

// The overlap report: at 0.001 TFLOP/s, where the
// matmuls (3146 us) can hide communication, exposed communication drops
// from 71.720 us to 61.475 us when the matmul-grad overlap runs: the
// 10.245 us dX allreduce (2*(4-1)/4 * 16 KiB at 100 GB/s + 10 us) is hidden
// behind the dW matmul.
// RUN: dist-opt %examples/gpt_block.mlir --dist-dropout-seed --dist-parallel-embedding --dist-amp-check-finite --dist-assign-streams --dist-overlap-report="format=json peak-tflops=0.001" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOOVERLAP
// RUN: dist-opt %examples/gpt_block.mlir --dist-auto-parallel --dist-overlap-report="format=json peak-tflops=0.001" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OVERLAP
// NOOVERLAP: {"name":"train_step","compute_us":3145.728,"comm_us":71.720,"exposed_comm_us":71.720
// OVERLAP:   {"name":"train_step","compute_us":3145.728,"comm_us":71.720,"exposed_comm_us":61.475

// The rewritten example lowers all the way to the LLVM dialect for 8 MPI
// processes: the overlapped allreduces as MPI_Iallreduce through the
// runtime, the rest as MPI_Allreduce, nothing of dist left.
// RUN: dist-opt %examples/gpt_block.mlir --dist-auto-parallel --dist-to-llvm="world-size=8 entry=none" | FileCheck %s --check-prefix=LLVM --implicit-check-not="= dist." --implicit-check-not="  dist."
// LLVM-DAG: llvm.call @dist_comm_get
// LLVM-DAG: llvm.call @MPI_Allreduce
// LLVM-DAG: llvm.call @dist_iallreduce_f32
// LLVM-DAG: llvm.call @dist_wait
