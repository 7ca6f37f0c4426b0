// RUN: dist-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #dist.mesh
//===----------------------------------------------------------------------===//

// expected-error @+1 {{mesh must have at least one axis}}
#m = #dist.mesh<shape = []>

// -----

// expected-error @+1 {{mesh axis 1 has size 0; sizes must be positive}}
#m = #dist.mesh<shape = [2, 0]>

// -----

// expected-error @+1 {{mesh axis 0 has size -2; sizes must be positive}}
#m = #dist.mesh<shape = [-2]>

// -----

// A typo'd size is diagnosed, not allocated.
// expected-error @+1 {{mesh has more than 1048576 processes}}
#m = #dist.mesh<shape = [2147483648, 2147483648, 4]>

// -----

// expected-error @+1 {{mesh of 8 processes has 3 process ids}}
#m = #dist.mesh<shape = [2, 4], process_ids = [0, 1, 2]>

// -----

// expected-error @+1 {{process id -1 is negative}}
#m = #dist.mesh<shape = [2], process_ids = [0, -1]>

// -----

// expected-error @+1 {{process id 3 appears more than once}}
#m = #dist.mesh<shape = [2, 2], process_ids = [3, 1, 2, 3]>

// -----

// expected-error @+1 {{mesh of rank 2 has 1 axis names}}
#m = #dist.mesh<shape = [2, 4], names = ["dp"]>

// -----

// expected-error @+1 {{mesh axis names must be non-empty}}
#m = #dist.mesh<shape = [2, 4], names = ["dp", ""]>

// -----

// expected-error @+1 {{mesh axis name "dp" appears more than once}}
#m = #dist.mesh<shape = [2, 4], names = ["dp", "dp"]>

// -----

// expected-error @+1 {{expected 'names' or 'process_ids' (each at most once), got 'ids'}}
#m = #dist.mesh<shape = [2, 4], ids = [0, 1, 2, 3, 4, 5, 6, 7]>

// -----

// expected-error @+1 {{expected 'names' or 'process_ids' (each at most once), got 'names'}}
#m = #dist.mesh<shape = [2], names = ["a"], names = ["b"]>

// -----

//===----------------------------------------------------------------------===//
// #dist.tensor
//===----------------------------------------------------------------------===//

#mesh = #dist.mesh<shape = [2, 4]>
// expected-error @+1 {{dims_mapping entry 2 of dim 1 must be -1 or a mesh axis in [0, 2)}}
func.func private @f(tensor<4x4xf32, #dist.tensor<#mesh, [-1, 2]>>)

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// expected-error @+1 {{dims_mapping entry -2 of dim 0 must be -1 or a mesh axis in [0, 2)}}
func.func private @f(tensor<4x4xf32, #dist.tensor<#mesh, [-2, 1]>>)

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// expected-error @+1 {{mesh axis 0 splits more than one tensor dim}}
func.func private @f(tensor<4x4xf32, #dist.tensor<#mesh, [0, 0]>>)

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// expected-error @+1 {{partial axis 2 is not a mesh axis in [0, 2)}}
func.func private @f(tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [2 : sum]>>)

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// expected-error @+1 {{partial axes must be unique and ascending}}
func.func private @f(tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum, 1 : max]>>)

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// expected-error @+1 {{mesh axis 1 is both partial and in dims_mapping}}
func.func private @f(tensor<4x4xf32, #dist.tensor<#mesh, [1, -1], partial = [1 : sum]>>)

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// expected-error @+1 {{unknown reduction kind 'mean'; expected sum, max, min, prod or avg}}
func.func private @f(tensor<4x4xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : mean]>>)

// -----

#mesh = #dist.mesh<shape = [2, 4]>
// expected-error @+1 {{tensor of rank 2 has a distribution with 1 dims_mapping entries}}
func.func private @f(tensor<4x4xf32, #dist.tensor<#mesh, [0]>>)

// -----

// expected-error @+1 {{invalid kind of attribute specified}}
func.func private @f(tensor<4xf32, #dist.tensor<[2, 4], [0]>>)

// -----

//===----------------------------------------------------------------------===//
// Collectives: shared checks
//===----------------------------------------------------------------------===//

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.allreduce' op expects at least one mesh axis}}
  %0 = dist.allreduce %x on #mesh axes = [] reduce = sum : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.c_identity' op mesh axis 2 is out of range for a mesh of rank 2}}
  %0 = dist.c_identity %x on #mesh axes = [2] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.allreduce' op mesh axis -1 is out of range for a mesh of rank 2}}
  %0 = dist.allreduce %x on #mesh axes = [-1] reduce = sum : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.broadcast' op mesh axis 1 appears more than once}}
  %0 = dist.broadcast %x on #mesh axes = [1, 1] root = 0 : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.allreduce' op result element type 'f16' differs from the operand's 'f32'}}
  %0 = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xf32> -> tensor<4xf16>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.c_identity' op result shape [8] differs from the operand's [4]}}
  %0 = dist.c_identity %x on #mesh axes = [0] : tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-error @+1 {{'dist.allreduce' op operand and result must both have a #dist.tensor encoding or neither}}
  %0 = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
#other = #dist.mesh<shape = [4, 2]>
func.func @f(%x: tensor<4xf32, #dist.tensor<#other, [-1], partial = [0 : sum]>>) {
  // expected-error @+1 {{'dist.allreduce' op operand is distributed on mesh #dist.mesh<shape = [4, 2]>, not on the op's mesh #dist.mesh<shape = [2, 4]>}}
  %0 = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#other, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#other, [-1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
#other = #dist.mesh<shape = [4, 2]>
func.func @f(%x: tensor<4xf32, #dist.tensor<#mesh, [-1]>>) {
  // expected-error @+1 {{'dist.c_identity' op result is distributed on mesh #dist.mesh<shape = [4, 2]>, not on the op's mesh}}
  %0 = dist.c_identity %x on #mesh axes = [0] : tensor<4xf32, #dist.tensor<#mesh, [-1]>> -> tensor<4xf32, #dist.tensor<#other, [-1]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dist.allreduce
//===----------------------------------------------------------------------===//

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-error @+1 {{'dist.allreduce' op operand must be partial on mesh axis 1 that it reduces over}}
  %0 = dist.allreduce %x on #mesh axes = [1] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>>) {
  // expected-error @+1 {{'dist.allreduce' op operand is partial (max) on mesh axis 1 but the allreduce reduces with sum}}
  %0 = dist.allreduce %x on #mesh axes = [1] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : max]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  // The result must no longer be partial on the reduced axis.
  // expected-error @+1 {{'dist.allreduce' op result distribution must be the operand's with the reduced axes no longer partial: expected #dist.tensor<#dist.mesh<shape = [2, 4]>, [-1]>}}
  %0 = dist.allreduce %x on #mesh axes = [1] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>>) {
  // Everything but the reduced axis stays the same: no new split.
  // expected-error @+1 {{'dist.allreduce' op result distribution must be the operand's with the reduced axes no longer partial}}
  %0 = dist.allreduce %x on #mesh axes = [1] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [1 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [0]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dist.broadcast and dist.c_identity
//===----------------------------------------------------------------------===//

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.broadcast' op root 2 is out of range for a group of 2 processes}}
  %0 = dist.broadcast %x on #mesh axes = [0] root = 2 : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.broadcast' op attribute 'root' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = dist.broadcast %x on #mesh axes = [0] root = -1 : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32, #dist.tensor<#mesh, [1]>>) {
  // expected-error @+1 {{'dist.broadcast' op cannot broadcast along mesh axis 1: the operand is split over it}}
  %0 = dist.broadcast %x on #mesh axes = [1] root = 0 : tensor<8xf32, #dist.tensor<#mesh, [1]>> -> tensor<8xf32, #dist.tensor<#mesh, [1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) {
  // expected-error @+1 {{'dist.broadcast' op cannot broadcast along mesh axis 0: the operand is partial on it}}
  %0 = dist.broadcast %x on #mesh axes = [0] root = 0 : tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32, #dist.tensor<#mesh, [1]>>) {
  // expected-error @+1 {{'dist.broadcast' op must not change the distribution of its operand}}
  %0 = dist.broadcast %x on #mesh axes = [0] root = 0 : tensor<8xf32, #dist.tensor<#mesh, [1]>> -> tensor<8xf32, #dist.tensor<#mesh, [-1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32, #dist.tensor<#mesh, [1]>>) {
  // expected-error @+1 {{'dist.c_identity' op must not change the distribution of its operand}}
  %0 = dist.c_identity %x on #mesh axes = [0] : tensor<8xf32, #dist.tensor<#mesh, [1]>> -> tensor<8xf32, #dist.tensor<#mesh, [0]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+2 {{'dist.allreduce' op operand #0 must be ranked tensor of any type values, but got 'tensor<*xf32>'}}
  %u = tensor.cast %x : tensor<8xf32> to tensor<*xf32>
  %0 = "dist.allreduce"(%u) <{axes = array<i64: 0>, kind = 0 : i32, mesh = #mesh}> : (tensor<*xf32>) -> tensor<8xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, max, min, prod, avg]}}
  %0 = dist.allreduce %x on #mesh axes = [0] reduce = mean : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Asynchronous collectives and dist.wait
//===----------------------------------------------------------------------===//

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.allreduce' op is asynchronous (returns a future) but is not on a communication stream}}
  %f = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<8xf32> -> !dist.future<tensor<8xf32>>
  %r = dist.wait %f : !dist.future<tensor<8xf32>>
  return %r : tensor<8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.allreduce' op is asynchronous (returns a future) but is not on a communication stream}}
  %f = dist.allreduce %x on #mesh axes = [0] reduce = sum stream = compute : tensor<8xf32> -> !dist.future<tensor<8xf32>>
  %r = dist.wait %f : !dist.future<tensor<8xf32>>
  return %r : tensor<8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) -> !dist.future<tensor<8xf32>> {
  // A value of an unfinished collective is used: here it escapes by return.
  // expected-error @+1 {{'dist.allreduce' op result is used by 'func.return' before a dist.wait completes it}}
  %f = dist.allreduce %x on #mesh axes = [0] reduce = sum stream = dp : tensor<8xf32> -> !dist.future<tensor<8xf32>>
  return %f : !dist.future<tensor<8xf32>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.allreduce' op result is used by 'dist.scale' before a dist.wait completes it}}
  %f = dist.allreduce %x on #mesh axes = [0] reduce = sum stream = dp : tensor<8xf32> -> !dist.future<tensor<8xf32>>
  %s = "dist.scale"(%f) <{factor = 2.0 : f64}> : (!dist.future<tensor<8xf32>>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{'dist.allreduce' op result is waited for more than once}}
  %f = dist.allreduce %x on #mesh axes = [0] reduce = sum stream = dp : tensor<8xf32> -> !dist.future<tensor<8xf32>>
  %a = dist.wait %f : !dist.future<tensor<8xf32>>
  %b = dist.wait %f : !dist.future<tensor<8xf32>>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.broadcast' op result is never waited for}}
  %f = dist.broadcast %x on #mesh axes = [0] root = 0 stream = dp : tensor<8xf32> -> !dist.future<tensor<8xf32>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // The future escapes its block into a nested region.
  // expected-error @+1 {{'dist.allreduce' op result is waited for in another block; a future may not leave the block of its collective}}
  %f = dist.allreduce %x on #mesh axes = [0] reduce = sum stream = dp : tensor<8xf32> -> !dist.future<tensor<8xf32>>
  %r = scf.execute_region -> tensor<8xf32> {
    %v = dist.wait %f : !dist.future<tensor<8xf32>>
    scf.yield %v : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// expected-note @+1 {{prior use here}}
func.func @f(%f: !dist.future<tensor<8xf32>>) -> tensor<4xf32> {
  // expected-error @+1 {{use of value '%f' expects different type than prior uses: '!dist.future<tensor<4xf32>>' vs '!dist.future<tensor<8xf32>>'}}
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r : tensor<4xf32>
}

// -----

func.func @f(%f: !dist.future<tensor<8xf32>>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.wait' op waits for nothing: its future does not come from a collective or a dist.recv}}
  %r = dist.wait %f : !dist.future<tensor<8xf32>>
  return %r : tensor<8xf32>
}

// -----

func.func @f(%f: !dist.future<tensor<8xf32>>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.wait' op failed to verify that result is the value type of the future}}
  %r = "dist.wait"(%f) : (!dist.future<tensor<8xf32>>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// expected-error @+2 {{invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
// expected-error @+1 {{failed to parse Dist_FutureType parameter 'valueType'}}
func.func private @f(!dist.future<f32>)

// -----

//===----------------------------------------------------------------------===//
// dist.process_coord and dist.seed
//===----------------------------------------------------------------------===//

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f() -> index {
  // expected-error @+1 {{'dist.process_coord' op mesh axis 2 is out of range for a mesh of rank 2}}
  %0 = dist.process_coord #mesh axis = 2
  return %0 : index
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f() -> index {
  // expected-error @+1 {{'dist.process_coord' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = dist.process_coord #mesh axis = -1
  return %0 : index
}

// -----

func.func @f() -> index {
  // expected-error @+1 {{invalid kind of attribute specified}}
  %0 = dist.process_coord [2, 4] axis = 0
  return %0 : index
}

// -----

func.func @f() -> tensor<2xi32> {
  // expected-error @+1 {{'dist.seed' op result must be a one-element rank-1 tensor, got 'tensor<2xi32>'}}
  %0 = dist.seed 1 : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @f() -> tensor<1xi64> {
  // expected-error @+1 {{'dist.seed' op result #0 must be ranked tensor of 32-bit signless integer values}}
  %0 = dist.seed 1 : tensor<1xi64>
  return %0 : tensor<1xi64>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f() {
  // expected-error @+1 {{'dist.seed' op seed must be replicated (dims_mapping [-1], not partial)}}
  %0 = dist.seed 1 : tensor<1xi32, #dist.tensor<#mesh, [0]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

func.func @f(%ids: tensor<4xi64>, %w: tensor<2x8x16xf32>) {
  // expected-error @+1 {{'dist.embedding' op weight must have rank 2, got rank 3}}
  %0 = dist.embedding %ids, %w : tensor<4xi64>, tensor<2x8x16xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @f(%ids: tensor<4xf32>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{'dist.embedding' op operand #0 must be ranked tensor of integer values, but got 'tensor<4xf32>'}}
  %0 = dist.embedding %ids, %w : tensor<4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @f(%ids: tensor<4xi64>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{'dist.embedding' op result shape [4, 8] must be the ids shape followed by the weight's column count: [4, 16]}}
  %0 = dist.embedding %ids, %w : tensor<4xi64>, tensor<8x16xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%ids: tensor<4xi64>, %w: tensor<8x16xf32>, %s: index) {
  // expected-error @+1 {{'dist.c_embedding' op result element type 'f16' differs from the weight's 'f32'}}
  %0 = dist.c_embedding %ids, %w start = %s : tensor<4xi64>, tensor<8x16xf32> -> tensor<4x16xf16>
  return
}

// -----

func.func @f(%ids: tensor<4xi64>, %w: tensor<8x16xf32>, %s: index) {
  // expected-error @+1 {{'dist.c_embedding' op result shape [16] must be the ids shape followed by the weight's column count: [4, 16]}}
  %0 = dist.c_embedding %ids, %w start = %s : tensor<4xi64>, tensor<8x16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @f(%ids: tensor<4xi64>, %w: tensor<8x16xf32>, %g: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.embedding_grad' op out_grad shape [4, 8] must be the ids shape followed by the weight's column count: [4, 16]}}
  %0 = dist.embedding_grad %ids, %w, %g : tensor<4xi64>, tensor<8x16xf32>, tensor<4x8xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @f(%ids: tensor<4xi64>, %w: tensor<8x16xf32>, %g: tensor<4x16xf32>) {
  // expected-error @+1 {{'dist.embedding_grad' op weight gradient type 'tensor<16x8xf32>' must have the weight's shape and element type}}
  %0 = dist.embedding_grad %ids, %w, %g : tensor<4xi64>, tensor<8x16xf32>, tensor<4x16xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%ids: tensor<4xi64>, %w: tensor<8x16xf32>, %g: tensor<4x16xf32>, %s: index) {
  // expected-error @+1 {{'dist.c_embedding_grad' op weight gradient type 'tensor<8x16xf16>' must have the weight's shape and element type}}
  %0 = dist.c_embedding_grad %ids, %w, %g start = %s : tensor<4xi64>, tensor<8x16xf32>, tensor<4x16xf32> -> tensor<8x16xf16>
  return
}

// -----

func.func @f(%ids: tensor<4xi64>, %w: tensor<8x16xf32>, %g: tensor<4x16xf16>, %s: index) {
  // expected-error @+1 {{'dist.c_embedding_grad' op out_grad element type 'f16' differs from the weight's 'f32'}}
  %0 = dist.c_embedding_grad %ids, %w, %g start = %s : tensor<4xi64>, tensor<8x16xf32>, tensor<4x16xf16> -> tensor<8x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dist.matmul and dist.matmul_grad
//===----------------------------------------------------------------------===//

func.func @f(%x: tensor<8xf32>, %y: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.matmul' op operands must have rank >= 2, got ranks 1 and 2}}
  %0 = dist.matmul %x, %y : tensor<8xf32>, tensor<8x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %y: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.matmul' op contraction sizes differ: x has 8, y has 4}}
  %0 = dist.matmul %x, %y : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x3x8xf32>, %y: tensor<4x8x5xf32>) {
  // expected-error @+1 {{'dist.matmul' op batch dims of x [2] and y [4] do not broadcast}}
  %0 = dist.matmul %x, %y : tensor<2x3x8xf32>, tensor<4x8x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %y: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.matmul' op result shape [4, 2] differs from the inferred [2, 4]}}
  %0 = dist.matmul %x, %y : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %y: tensor<8x4xf16>) {
  // expected-error @+1 {{'dist.matmul' op operands and results must have one element type, got 'f32' and 'f16'}}
  %0 = dist.matmul %x, %y : tensor<2x8xf32>, tensor<8x4xf16> -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %y: tensor<8x4xf32>, %d: tensor<2x8xf32>) {
  // expected-error @+1 {{'dist.matmul_grad' op out_grad shape [2, 8] differs from the forward result shape [2, 4]}}
  %0:2 = dist.matmul_grad %x, %y, %d : tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x8xf32> -> tensor<2x8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %y: tensor<8x4xf32>, %d: tensor<2x4xf32>) {
  // expected-error @+1 {{'dist.matmul_grad' op x_grad shape must equal the shape of x}}
  %0:2 = dist.matmul_grad %x, %y, %d : tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x4xf32> -> tensor<8x2xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %y: tensor<8x4xf32>, %d: tensor<2x4xf32>) {
  // expected-error @+1 {{'dist.matmul_grad' op y_grad shape must equal the shape of y}}
  %0:2 = dist.matmul_grad %x, %y, %d : tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x4xf32> -> tensor<2x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %y: tensor<8x4xf32>, %d: tensor<2x4xf32>) {
  // expected-error @+1 {{'dist.matmul_grad' op operands and results must have one element type, got 'f32' and 'bf16'}}
  %0:2 = dist.matmul_grad %x, %y, %d : tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x4xf32> -> tensor<2x8xf32>, tensor<8x4xbf16>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %y: tensor<4x8xf32>, %d: tensor<2x4xf32>) {
  // Without transpose_y, the contraction sizes of y^T do not match.
  // expected-error @+1 {{'dist.matmul_grad' op contraction sizes differ: x has 8, y has 4}}
  %0:2 = dist.matmul_grad %x, %y, %d : tensor<2x8xf32>, tensor<4x8xf32>, tensor<2x4xf32> -> tensor<2x8xf32>, tensor<4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dist.dropout
//===----------------------------------------------------------------------===//

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.scale' op factor must be finite, got NaN}}
  %0 = dist.scale %x by 0x7FF8000000000000 : tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.scale' op factor must be finite, got -inf}}
  %0 = dist.scale %x by 0xFFF0000000000000 : tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.dropout' op prob must be in [0, 1), got 1}}
  %0 = dist.dropout %x prob = 1.0 : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.dropout' op prob must be in [0, 1), got -1.000000e-01}}
  %0 = dist.dropout %x prob = -0.1 : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  %s = dist.seed 1 : tensor<1xi32>
  // expected-error @+1 {{'dist.dropout' op has both a seed operand and fix_seed; keep one}}
  %0 = dist.dropout %x seed(%s : tensor<1xi32>) prob = 0.1 {fix_seed = 1 : i32} : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>, %s: tensor<2xi32>) {
  // expected-error @+1 {{'dist.dropout' op seed must be a one-element rank-1 tensor, got 'tensor<2xi32>'}}
  %0 = dist.dropout %x seed(%s : tensor<2xi32>) prob = 0.1 : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.dropout' op is either a named original (id) or a recomputation (recompute_of), not both}}
  %0 = dist.dropout %x prob = 0.1 {id = "a", recompute_of = "b"} : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.dropout' op failed to verify that all of {input, result} have same type}}
  %0 = dist.dropout %x prob = 0.1 : tensor<4xf32> -> tensor<4xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dist.scale and dist.check_finite_and_unscale
//===----------------------------------------------------------------------===//

func.func @f(%x: tensor<4xi32>) {
  // expected-error @+1 {{'dist.scale' op operand #0 must be ranked tensor of floating-point values}}
  %0 = dist.scale %x by 2.0 : tensor<4xi32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'dist.check_finite_and_unscale' op expects one output per gradient, got 0 outputs for 1 gradients}}
  %0 = dist.check_finite_and_unscale %g scale %s : (tensor<4xf32>, tensor<1xf32>) -> (tensor<1xi1>)
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %h: tensor<4xi32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'dist.check_finite_and_unscale' op gradient #1 has element type 'i32'; expected f16, f32 or f64}}
  %0:3 = dist.check_finite_and_unscale %g, %h scale %s : (tensor<4xf32>, tensor<4xi32>, tensor<1xf32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<1xi1>)
  return
}

// -----

func.func @f(%g: tensor<4xbf16>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'dist.check_finite_and_unscale' op gradient #0 has element type 'bf16'; expected f16, f32 or f64}}
  %0:2 = dist.check_finite_and_unscale %g scale %s : (tensor<4xbf16>, tensor<1xf32>) -> (tensor<4xbf16>, tensor<1xi1>)
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'dist.check_finite_and_unscale' op output #0 has type 'tensor<8xf32>', expected its gradient's type 'tensor<4xf32>'}}
  %0:2 = dist.check_finite_and_unscale %g scale %s : (tensor<4xf32>, tensor<1xf32>) -> (tensor<8xf32>, tensor<1xi1>)
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'dist.check_finite_and_unscale' op scale must have exactly one element, got 'tensor<2xf32>'}}
  %0:2 = dist.check_finite_and_unscale %g scale %s : (tensor<4xf32>, tensor<2xf32>) -> (tensor<4xf32>, tensor<1xi1>)
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'dist.check_finite_and_unscale' op found_inf must have exactly one element, got 'tensor<2xi1>'}}
  %0:2 = dist.check_finite_and_unscale %g scale %s : (tensor<4xf32>, tensor<1xf32>) -> (tensor<4xf32>, tensor<2xi1>)
  return
}

//===----------------------------------------------------------------------===//
// The marker attributes (dialect attributes)
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'func.func' op argument #0: 'dist.param' must be a non-empty string naming a parameter, got unit}}
func.func @param_unit(%w: tensor<4xf32> {dist.param}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'dist.param' must be a non-empty string naming a parameter, got ""}}
func.func @param_empty(%w: tensor<4xf32> {dist.param = ""}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #1: parameter "w" is already named by argument #0}}
func.func @param_twice(%a: tensor<4xf32> {dist.param = "w"}, %b: tensor<4xf32> {dist.param = "w"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'dist.param' marks a result only in the 'dist.startup' function}}
func.func @param_result_outside_startup(%w: tensor<4xf32>) -> (tensor<4xf32> {dist.param = "w"}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'dist.param' marks a function argument or a function result, not an operation}}
func.func @param_on_op() attributes {dist.param = "w"} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'dist.startup' is a unit attribute, got "yes"}}
func.func @startup_string() attributes {dist.startup = "yes"} {
  return
}

// -----

func.func @startup_not_function() {
  // expected-error @+1 {{'arith.constant' op 'dist.startup' marks a function}}
  %c = arith.constant {dist.startup} 0 : index
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'dist.startup' marks an operation, not a function argument}}
func.func @startup_on_arg(%w: tensor<4xf32> {dist.startup}) {
  return
}

// -----

// A unit dist.grad used to crash --dist-amp-check-finite, which reads the
// parameter name.
// expected-error @+1 {{'func.func' op result #0: 'dist.grad' must be a non-empty string naming a parameter, got unit}}
func.func @grad_unit(%g: tensor<4xf32>, %s: tensor<1xf32> {dist.loss_scale}) -> (tensor<4xf32> {dist.grad}) {
  return %g : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'dist.grad' marks a function result, not a function argument}}
func.func @grad_on_arg(%g: tensor<4xf32> {dist.grad = "w"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'dist.loss_scale' is a unit attribute, got 2.000000e+00 : f32}}
func.func @loss_scale_value(%s: tensor<1xf32> {dist.loss_scale = 2.0 : f32}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'dist.loss_scale' marks a function argument, not a function result}}
func.func @loss_scale_on_result(%s: tensor<1xf32>) -> (tensor<1xf32> {dist.loss_scale}) {
  return %s : tensor<1xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'dist.loss' is a unit attribute, got "mean"}}
func.func @loss_value(%l: tensor<1xf32>) -> (tensor<1xf32> {dist.loss = "mean"}) {
  return %l : tensor<1xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'dist.loss' marks a function result, not a function argument}}
func.func @loss_on_arg(%l: tensor<1xf32> {dist.loss}) {
  return
}

// -----

func.func @stage_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dist.stage' must be a non-negative integer, got -1 : i64}}
  %y = arith.addf %x, %x {dist.stage = -1} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @stage_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dist.stage' must be a non-negative integer, got "first"}}
  %y = arith.addf %x, %x {dist.stage = "first"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'dist.found_inf' is a unit attribute, got true}}
func.func @found_inf_value(%f: tensor<1xi1>) -> (tensor<1xi1> {dist.found_inf = true}) {
  return %f : tensor<1xi1>
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'dist.found_inf' marks a function result, not a function argument}}
func.func @found_inf_on_arg(%f: tensor<1xi1> {dist.found_inf}) {
  return
}

// -----

func.func @recompute_value(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.scale' op 'dist.recompute' is a unit attribute, got 1 : i64}}
  %0 = dist.scale %x by 2.0 {dist.recompute = 1} : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'dist.recompute' marks an operation, not a function result}}
func.func @recompute_on_result(%x: tensor<4xf32>) -> (tensor<4xf32> {dist.recompute}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0: unknown dist attribute 'dist.parameter'}}
func.func @typo(%w: tensor<4xf32> {dist.parameter = "w"}) {
  return
}

// -----

// A local dim whose global size (times the axis size) overflows 64 bits.
#mesh = #dist.mesh<shape = [4]>
// expected-error @+1 {{dim 0 of local size 4611686018427387904 split over mesh axis 0 (size 4) has a global size that does not fit in 64 bits}}
func.func @global_overflow(%x: tensor<4611686018427387904xf32, #dist.tensor<#mesh, [0]>>) {
  return
}

//===----------------------------------------------------------------------===//
// Redistribution
//===----------------------------------------------------------------------===//

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @gather_plain(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_gather' op needs a #dist.tensor encoding on its operand and its result: they say what it redistributes}}
  %r = dist.all_gather %x on #mesh axes = [0] : tensor<4x8xf32> -> tensor<8x8xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @gather_not_split(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>) {
  // expected-error @+1 {{'dist.all_gather' op mesh axis 0 goes from replicated to replicated, but 'dist.all_gather' takes a split dim to replicated}}
  %r = dist.all_gather %x on #mesh axes = [0] : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @gather_shape(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'dist.all_gather' op result's global shape [4, 8] differs from the operand's [8, 8]}}
  %r = dist.all_gather %x on #mesh axes = [0] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @gather_other_axis(%x: tensor<4x2xf32, #dist.tensor<#mesh, [0, 1]>>) {
  // expected-error @+1 {{'dist.all_gather' op mesh axis 1 is split dim 1 in the operand but replicated in the result; only the axes the op runs over may change}}
  %r = dist.all_gather %x on #mesh axes = [0] : tensor<4x2xf32, #dist.tensor<#mesh, [0, 1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @gather_element(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'dist.all_gather' op result element type 'f16' differs from the operand's 'f32'}}
  %r = dist.all_gather %x on #mesh axes = [0] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf16, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
#other = #dist.mesh<shape = [4, 2]>
func.func @gather_mesh(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'dist.all_gather' op result is distributed on mesh #dist.mesh<shape = [4, 2]>, not on the op's mesh #dist.mesh<shape = [2, 4]>}}
  %r = dist.all_gather %x on #mesh axes = [0] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#other, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @gather_axes(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'dist.all_gather' op mesh axis 2 is out of range for a mesh of rank 2}}
  %r = dist.all_gather %x on #mesh axes = [2] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @gather_never_waited(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'dist.all_gather' op result is never waited for}}
  %f = dist.all_gather %x on #mesh axes = [0] stream = mp : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> !dist.future<tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @scatter_kind(%p: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : max]>>) {
  // expected-error @+1 {{'dist.reduce_scatter' op mesh axis 1 goes from partial (max) to split dim 1, but 'dist.reduce_scatter' takes partial (sum) to a split dim}}
  %r = dist.reduce_scatter %p on #mesh axes = [1] reduce = sum : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : max]>> -> tensor<8x2xf32, #dist.tensor<#mesh, [-1, 1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @scatter_to_partial(%p: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>>) {
  // expected-error @+1 {{'dist.reduce_scatter' op mesh axis 1 goes from partial (sum) to replicated, but 'dist.reduce_scatter' takes partial (sum) to a split dim}}
  %r = dist.reduce_scatter %p on #mesh axes = [1] reduce = sum : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [1 : sum]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @all_to_all_two_axes(%x: tensor<4x2xf32, #dist.tensor<#mesh, [0, 1]>>) {
  // expected-error @+1 {{'dist.all_to_all' op moves the split of one mesh axis, but has 2 axes}}
  %r = dist.all_to_all %x on #mesh axes = [0, 1] : tensor<4x2xf32, #dist.tensor<#mesh, [0, 1]>> -> tensor<2x4xf32, #dist.tensor<#mesh, [1, 0]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @all_to_all_same_dim(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) {
  // expected-error @+1 {{'dist.all_to_all' op mesh axis 0 goes from split dim 0 to split dim 0, but 'dist.all_to_all' takes a split dim to another split dim}}
  %r = dist.all_to_all %x on #mesh axes = [0] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @slice_partial(%p: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>>) {
  // expected-error @+1 {{'dist.all_slice' op mesh axis 0 goes from partial (sum) to split dim 0, but 'dist.all_slice' takes replicated to a split dim}}
  %r = dist.all_slice %p on #mesh axes = [0] : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : sum]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @make_partial_kind(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>) {
  // expected-error @+1 {{'dist.make_partial' op mesh axis 0 goes from replicated to partial (max), but 'dist.make_partial' takes replicated or a split dim to partial (sum)}}
  %r = dist.make_partial %x on #mesh axes = [0] reduce = sum : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1], partial = [0 : max]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @reshard_plain(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'dist.reshard' op needs a #dist.tensor encoding on its operand or its result}}
  %r = dist.reshard %x : tensor<8x8xf32> -> tensor<8x8xf32>
  return
}

// -----

// An unencoded side is replicated on the other side's mesh: its global
// shape is its local one.
#mesh = #dist.mesh<shape = [2, 4]>
func.func @reshard_plain_shape(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'dist.reshard' op result's global shape [16, 8] differs from the operand's [8, 8]}}
  %r = dist.reshard %x : tensor<8x8xf32> -> tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
#other = #dist.mesh<shape = [8]>
func.func @reshard_mesh(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>) {
  // expected-error @+1 {{'dist.reshard' op changes the mesh from #dist.mesh<shape = [2, 4]> to #dist.mesh<shape = [8]>; a reshard stays on one mesh}}
  %r = dist.reshard %x : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<1x8xf32, #dist.tensor<#other, [0, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @reshard_shape(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>) {
  // expected-error @+1 {{'dist.reshard' op result's global shape [16, 8] differs from the operand's [8, 8]}}
  %r = dist.reshard %x : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<8x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @reshard_element(%x: tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>>) {
  // expected-error @+1 {{'dist.reshard' op result element type 'i32' differs from the operand's 'f32'}}
  %r = dist.reshard %x : tensor<8x8xf32, #dist.tensor<#mesh, [-1, -1]>> -> tensor<4x8xi32, #dist.tensor<#mesh, [0, -1]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dist.constraint
//===----------------------------------------------------------------------===//

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @constraint_unencoded(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'dist.constraint' op result has no #dist.tensor encoding: a constraint pins the distribution its result type carries (replicated is written [-1, ...])}}
  %c = dist.constraint %x : tensor<8x8xf32> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2], names = ["mp"]>
func.func @constraint_shape(%x: tensor<8x8xf32>) -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> attributes {dist.complete} {
  // expected-error @+1 {{'dist.constraint' op operand type 'tensor<8x8xf32>' and result type 'tensor<4x8xf32, #dist.tensor<#dist.mesh<shape = [2], names = ["mp"]>, [0, -1]>>' differ beyond the encoding: a constraint keeps the local shape (dist.reshard changes a distribution)}}
  %c = dist.constraint %x : tensor<8x8xf32> -> tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
  return %c : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>
}

// -----

#a = #dist.mesh<shape = [2], names = ["mp"]>
#b = #dist.mesh<shape = [2], names = ["dp"]>
func.func @constraint_mesh(%x: tensor<8x8xf32, #dist.tensor<#a, [-1, -1]>>) -> tensor<8x8xf32, #dist.tensor<#b, [-1, -1]>> attributes {dist.complete} {
  // expected-error @+1 {{'dist.constraint' op changes the mesh from}}
  %c = dist.constraint %x : tensor<8x8xf32, #dist.tensor<#a, [-1, -1]>> -> tensor<8x8xf32, #dist.tensor<#b, [-1, -1]>>
  return %c : tensor<8x8xf32, #dist.tensor<#b, [-1, -1]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 2], names = ["dp", "mp"]>
func.func @constraint_unmarked(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>> {
  // expected-error @+1 {{'dist.constraint' op operand has #dist.tensor<#dist.mesh<shape = [2, 2], names = ["dp", "mp"]>, [0, -1]> but the constraint pins #dist.tensor<#dist.mesh<shape = [2, 2], names = ["dp", "mp"]>, [1, -1]>: outside a function marked 'dist.complete' a constraint only states what holds (dist.reshard changes a distribution)}}
  %c = dist.constraint %x : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> -> tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>
  return %c : tensor<4x8xf32, #dist.tensor<#mesh, [1, -1]>>
}

// -----

//===----------------------------------------------------------------------===//
// dist.send, dist.recv
//===----------------------------------------------------------------------===//

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.send' op mesh axis 2 is out of range for a mesh of rank 2}}
  dist.send %x to 1 on #mesh axis = 2 tag = 0 : tensor<8xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.send' op peer 2 is not a coordinate of mesh axis 0 (size 2)}}
  dist.send %x to 2 on #mesh axis = 0 tag = 0 : tensor<8xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.send' op attribute 'peer' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  dist.send %x to -1 on #mesh axis = 0 tag = 0 : tensor<8xf32>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f() -> tensor<8xf32> {
  // expected-error @+1 {{'dist.recv' op tag 32768 exceeds 32767, the largest tag MPI guarantees}}
  %r = dist.recv from 1 on #mesh axis = 0 tag = 32768 : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f(%x: tensor<4xf32, #dist.tensor<#mesh, [0]>>) {
  // expected-error @+1 {{'dist.send' op transfers along mesh axis 0 a tensor split or partial over it: #dist.tensor<#dist.mesh<shape = [2, 4]>, [0]>}}
  dist.send %x to 1 on #mesh axis = 0 tag = 0 : tensor<4xf32, #dist.tensor<#mesh, [0]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f() -> tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> {
  // expected-error @+1 {{'dist.recv' op transfers along mesh axis 0 a tensor split or partial over it}}
  %r = dist.recv from 1 on #mesh axis = 0 tag = 0 : tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
  return %r : tensor<8xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
#other = #dist.mesh<shape = [8]>
func.func @f(%x: tensor<8xf32, #dist.tensor<#other, [-1]>>) {
  // expected-error @+1 {{'dist.send' op the tensor is distributed on mesh}}
  dist.send %x to 1 on #mesh axis = 0 tag = 0 : tensor<8xf32, #dist.tensor<#other, [-1]>>
  return
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f() -> !dist.future<tensor<8xf32>> {
  // expected-error @+1 {{'dist.recv' op result is used by 'func.return' before a dist.wait completes it}}
  %f = dist.recv from 1 on #mesh axis = 0 tag = 0 : !dist.future<tensor<8xf32>>
  return %f : !dist.future<tensor<8xf32>>
}

// -----

#mesh = #dist.mesh<shape = [2, 4]>
func.func @f() {
  // expected-error @+1 {{'dist.recv' op result is never waited for}}
  %f = dist.recv from 1 on #mesh axis = 0 tag = 0 : !dist.future<tensor<8xf32>>
  return
}
