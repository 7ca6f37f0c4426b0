// RUN: dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="microbatches=2" | FileCheck %s
// RUN: dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="microbatches=2 remarks" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="microbatches=4 schedule=gpipe remarks" --dist-verify-distributions -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPIPE
// RUN: dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="microbatches=4 remarks" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONEF
// RUN: dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="microbatches=4 schedule=zb-h1 remarks" --dist-verify-distributions -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZB
// RUN: dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="microbatches=4 schedule=zb-h1" | FileCheck %s --check-prefix=ZBIR --implicit-check-not=dist.matmul_grad
// RUN: dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="microbatches=3 schedule=zb-h1" --dist-verify-distributions -o /dev/null
// RUN: dist-opt %S/Inputs/pipeline-mlp.mlir --dist-pipeline="microbatches=4 schedule=interleaved chunks=2" --dist-verify-distributions -o /dev/null
// RUN: dist-opt %S/Inputs/pipeline-zb-gram.mlir --dist-pipeline="microbatches=2 schedule=zb-h1" --dist-verify-distributions | FileCheck %s --check-prefix=GRAM

// The four-layer step on two stages (layers 0-1 and 2-3), two microbatches,
// 1F1B. A data argument becomes one per microbatch; the stages are the
// cases of a switch on the pipeline coordinate; every receive is posted an
// action ahead of its wait; the gradients are averaged before the update;
// every result is broadcast from the stage that made it.

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X0:.*]]: tensor<4x8xf32, {{.*}}>, %[[X1:.*]]: tensor<4x8xf32, {{.*}}>, %[[T0:.*]]: tensor<4x8xf32, {{.*}}>, %[[T1:.*]]: tensor<4x8xf32, {{.*}}>, %[[W0:.*]]: tensor<8x8xf32, {{.*}}> {dist.param = "w0"},
// CHECK: %[[PP:.*]] = dist.process_coord #mesh axis = 0
// CHECK: %[[R:.*]]:5 = scf.index_switch %[[PP]]
// Stage 0: F0 F1 B0 B1.
// CHECK: case 0 {
// CHECK: dist.matmul %[[X0]], %[[W0]]
// CHECK: dist.send %{{.*}} to 1 on #mesh axis = 0 tag = 0
// CHECK: %[[G0:.*]] = dist.recv from 1 on #mesh axis = 0 tag = 2 : !dist.future
// CHECK: dist.matmul %[[X1]], %[[W0]]
// CHECK: dist.send %{{.*}} to 1 on #mesh axis = 0 tag = 1
// CHECK: %[[G1:.*]] = dist.recv from 1 on #mesh axis = 0 tag = 3 : !dist.future
// CHECK: dist.wait %[[G0]]
// CHECK: %{{.*}}, %[[DWA:.*]] = dist.matmul_grad %[[X0]], %[[W0]]
// CHECK: dist.wait %[[G1]]
// CHECK: %{{.*}}, %[[DWB:.*]] = dist.matmul_grad %[[X1]], %[[W0]]
// CHECK: %[[SUM:.*]] = arith.addf %[[DWA]], %[[DWB]]
// CHECK: %[[MEAN:.*]] = dist.scale %[[SUM]] by 5.000000e-01
// CHECK: dist.sgd %[[W0]], %[[MEAN]]
// CHECK: scf.yield
// Stage 1: F0 B0 F1 B1, the loss and w3's gradient averaged.
// CHECK: default {
// CHECK: %[[A0:.*]] = dist.recv from 0 on #mesh axis = 0 tag = 0
// CHECK-NEXT: dist.wait %[[A0]]
// CHECK: %[[A1:.*]] = dist.recv from 0 on #mesh axis = 0 tag = 1
// CHECK: dist.send %{{.*}} to 0 on #mesh axis = 0 tag = 2
// CHECK: dist.wait %[[A1]]
// CHECK: dist.send %{{.*}} to 0 on #mesh axis = 0 tag = 3
// CHECK: dist.scale {{.*}} : tensor<f32
// CHECK-NEXT: dist.scale {{.*}} : tensor<8x8xf32
// CHECK: dist.sgd
// CHECK: dist.broadcast %[[R]]#0 on #mesh axes = [0] root = 1
// CHECK: dist.broadcast %[[R]]#1 on #mesh axes = [0] root = 0
// CHECK: dist.broadcast %[[R]]#2 on #mesh axes = [0] root = 0
// CHECK: dist.broadcast %[[R]]#3 on #mesh axes = [0] root = 1
// CHECK: dist.broadcast %[[R]]#4 on #mesh axes = [0] root = 1

// REMARK: remark: 1f1b on 2 stages, 2 microbatches: 4 transfers, bubble 0.5000 of the compute (0.3333 of the step), step 9.216E-05 us of compute by the cost model (transfers not priced)
// REMARK-NEXT: stage 0: at most 2 microbatches held, 256 bytes each, peak 512 bytes
// REMARK-NEXT: stage 1: at most 1 microbatches held, 384 bytes each, peak 384 bytes
// REMARK-NEXT: stage 0: F0 F1 B0 B1
// REMARK-NEXT: stage 1: F0 B0 F1 B1

// The report's memory: GPipe holds all M microbatches' activations, 1F1B at
// most P - s on stage s; the bubble is (P - 1)/M of the compute for both
// (the cost model prices a backward product at twice the forward's).
// GPIPE: remark: gpipe on 2 stages, 4 microbatches: 8 transfers, bubble 0.2500 of the compute (0.2000 of the step)
// GPIPE-NEXT: stage 0: at most 4 microbatches held, 256 bytes each, peak 1024 bytes
// GPIPE-NEXT: stage 1: at most 4 microbatches held, 384 bytes each, peak 1536 bytes
// GPIPE-NEXT: stage 0: F0 F1 F2 F3 B0 B1 B2 B3
// ONEF: remark: 1f1b on 2 stages, 4 microbatches: 8 transfers, bubble 0.2500 of the compute (0.2000 of the step)
// ONEF-NEXT: stage 0: at most 2 microbatches held, 256 bytes each, peak 512 bytes
// ONEF-NEXT: stage 1: at most 1 microbatches held, 384 bytes each, peak 384 bytes
// ONEF-NEXT: stage 0: F0 F1 B0 F2 B1 F3 B2 B3
// ONEF-NEXT: stage 1: F0 B0 F1 B1 F2 B2 F3 B3
// ZB-H1 splits each dist.matmul_grad into its dX product (B: the chain of
// activation gradients) and its dW product (W), whose steps fill the
// bubbles: a step's bubble half of 1F1B's.
// ZB: remark: zb-h1 on 2 stages, 4 microbatches: 8 transfers, bubble 0.1111 of the compute (0.1000 of the step)
// ZB-NEXT: stage 0: at most 4 microbatches held, 256 bytes each, peak 1024 bytes
// ZB-NEXT: stage 1: at most 4 microbatches held, 256 bytes each, peak 1024 bytes
// ZB-NEXT: stage 0: F0 F1 B0 F2 B1 F3 B2 W0 W1 B3 W2 W3
// ZB-NEXT: stage 1: F0 B0 F1 B1 F2 B2 F3 B3 W0 W1 W2 W3
// Stage 0's B reads the received gradient and computes dX of layer 1; its
// W steps (dW of layer 0, microbatches 0 and 1) come after B2, before B3.
// ZBIR-LABEL: case 0
// ZBIR: %[[G0:.*]] = dist.wait
// ZBIR: dist.matmul %{{.*}}, %arg9 transpose_y
// ZBIR: dist.matmul %{{.*}}, %arg9 transpose_y
// ZBIR: dist.matmul %{{.*}}, %arg9 transpose_y
// ZBIR: %[[W0:.*]] = dist.matmul %arg0, %{{.*}} transpose_x
// ZBIR-NEXT: %[[W1:.*]] = dist.matmul %arg1, %{{.*}} transpose_x
// ZBIR-NEXT: arith.addf %[[W0]], %[[W1]]
// ZBIR-NEXT: dist.wait
// ZBIR-LABEL: default

// A transpose_x product that the activation gradients read (the Gram matrix
// of Inputs/pipeline-zb-gram.mlir) stays in B: stage 1 computes it, then dX,
// and sends dX before any weight product; the tied gradient stage 0 adds
// travels between the W steps.
// GRAM-LABEL: default
// GRAM: %[[F:.*]] = dist.wait
// GRAM: %[[DY:.*]] = arith.mulf %{{.*}}, %cst :
// GRAM-NEXT: %[[G:.*]] = dist.matmul %[[DY]], %[[DY]] transpose_x
// GRAM-NEXT: %[[DYS:.*]] = dist.matmul %[[DY]], %[[G]] :
// GRAM-NEXT: %[[DX:.*]] = dist.matmul %[[DYS]], %arg5 transpose_y
// GRAM-NEXT: dist.send %[[DX]] to 0 on #mesh axis = 0 tag = 2
// GRAM: dist.send {{.*}} tag = 3
// GRAM-NEXT: %[[W0:.*]] = dist.matmul %[[F]], %[[DYS]] transpose_x
// GRAM-NEXT: dist.send %[[W0]] to 0 on #mesh axis = 0 tag = 4
