// --dist-to-llvm frees what it allocates (MLIR's buffer-deallocation
// pipeline): in the MLP step after --dist-auto-parallel, every buffer the
// step does not return is freed, after the waits of the asynchronous
// allreduces that write into their receive buffers (each wait names its
// buffer); the returned ones are the caller's, which frees them.
// RUN: dist-opt %dist_src_root/test/Integration/Inputs/mlp-step.mlir --dist-auto-parallel --dist-to-llvm=world-size=2 --mlir-print-ir-after=bufferization-lower-deallocations -o %t.llvm.mlir 2>&1 | FileCheck %s
// And as many frees as mallocs in the LLVM dialect.
// RUN: grep -c "llvm.call @malloc" %t.llvm.mlir | FileCheck %s --check-prefix=COUNT
// RUN: grep -c "llvm.call @free" %t.llvm.mlir | FileCheck %s --check-prefix=COUNT
// COUNT: 14

// CHECK-LABEL: func.func @step
// CHECK: %[[H:.*]] = memref.alloc() {{.*}} : memref<64x32xf32>
// CHECK: %[[OP:.*]] = memref.alloc() {{.*}} : memref<64x64xf32>
// CHECK: %[[ORECV:.*]] = memref.alloc() : memref<4096xf32>
// CHECK-NOT: memref.copy
// CHECK: %[[OREQ:.*]] = call @dist_iallreduce_f32
// CHECK: %[[DH:.*]] = memref.alloc() {{.*}} : memref<64x32xf32>
// CHECK: %[[GW2:.*]] = memref.alloc() {{.*}} : memref<32x64xf32>
// CHECK: %[[DXP:.*]] = memref.alloc() {{.*}} : memref<64x64xf32>
// CHECK: %[[DXRECV:.*]] = memref.alloc() : memref<4096xf32>
// CHECK: %[[DXREQ:.*]] = call @dist_iallreduce_f32
// CHECK: %[[GW1:.*]] = memref.alloc() {{.*}} : memref<64x32xf32>
// CHECK: %[[OV:.*]] = memref.cast %[[ORECV]] : memref<4096xf32> to memref<?xf32>
// CHECK-NEXT: call @dist_wait_f32(%[[OREQ]], %[[OV]])
// CHECK: %[[DXV:.*]] = memref.cast %[[DXRECV]] : memref<4096xf32> to memref<?xf32>
// CHECK-NEXT: call @dist_wait_f32(%[[DXREQ]], %[[DXV]])
// CHECK: memref.dealloc %[[H]]
// CHECK: memref.dealloc %[[OP]]
// CHECK: memref.dealloc %[[DH]]
// CHECK: memref.dealloc %[[DXP]]
// CHECK-NOT: memref.dealloc
// CHECK: return %{{.*}}, %{{.*}}, %[[GW1]], %[[GW2]]
