// RUN: dist-opt %s --convert-dist-to-mpi="world-size=4" -split-input-file -verify-diagnostics

// One error per mesh, at its first op, however many ops use it.
#mesh = #dist.mesh<shape = [2]>
func.func @wrong_size(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{mesh #dist.mesh<shape = [2]> has 2 processes but the program runs on 4 (and 2 more ops use it)}}
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xf32> -> tensor<4xf32>
  %b = dist.allreduce %a on #mesh axes = [0] reduce = sum : tensor<4xf32> -> tensor<4xf32>
  %c = dist.allreduce %b on #mesh axes = [0] reduce = sum : tensor<4xf32> -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

#mesh = #dist.mesh<shape = [4], process_ids = [0, 1, 2, 7]>
func.func @id_outside_world() -> index {
  // expected-error @+1 {{has 4 processes but the program runs on 4}}
  %c = dist.process_coord #mesh axis = 0
  return %c : index
}

// -----

// What cannot be lowered is the pattern's located diagnostic, then the
// conversion framework's.
#mesh = #dist.mesh<shape = [4]>
func.func @avg_of_ints(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+2 {{'dist.allreduce' op cannot be lowered to MPI: an avg of integers is not exact}}
  // expected-error @+1 {{failed to legalize operation 'dist.allreduce' that was explicitly marked illegal}}
  %a = dist.allreduce %x on #mesh axes = [0] reduce = avg : tensor<4xi32> -> tensor<4xi32>
  return %a : tensor<4xi32>
}

// -----

#mesh = #dist.mesh<shape = [4]>
func.func @index_elements(%x: tensor<4xindex>) -> tensor<4xindex> {
  // expected-error @+2 {{'dist.allreduce' op cannot be lowered to MPI: no MPI reduction for element type 'index'}}
  // expected-error @+1 {{failed to legalize operation 'dist.allreduce'}}
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xindex> -> tensor<4xindex>
  return %a : tensor<4xindex>
}

// -----

#mesh = #dist.mesh<shape = [4]>
func.func @complex_elements(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+2 {{'dist.broadcast' op cannot be lowered to MPI: no MPI reduction for element type 'complex<f32>'}}
  // expected-error @+1 {{failed to legalize operation 'dist.broadcast'}}
  %a = dist.broadcast %x on #mesh axes = [0] root = 0 : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  return %a : tensor<4xcomplex<f32>>
}

// -----

#mesh = #dist.mesh<shape = [4]>
func.func @async_f8(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  // expected-error @+2 {{'dist.allreduce' op cannot be lowered to MPI: no MPI reduction for element type 'f8E4M3FN'}}
  // expected-error @+1 {{failed to legalize operation 'dist.allreduce'}}
  %f = dist.allreduce %x on #mesh axes = [0] reduce = max stream = mp : tensor<4xf8E4M3FN> -> !dist.future<tensor<4xf8E4M3FN>>
  %a = dist.wait %f : !dist.future<tensor<4xf8E4M3FN>>
  return %a : tensor<4xf8E4M3FN>
}

// -----

#mesh = #dist.mesh<shape = [4]>
func.func @dynamic_shape(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+2 {{'dist.allreduce' op cannot be lowered to MPI: its shape 'tensor<?xf32>' is not static}}
  // expected-error @+1 {{failed to legalize operation 'dist.allreduce'}}
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<?xf32> -> tensor<?xf32>
  return %a : tensor<?xf32>
}

// -----

// The runtime's entry points are reserved names.
#mesh = #dist.mesh<shape = [4]>
func.func private @dist_comm_get(i64) -> i64
func.func @reserved(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{the module defines 'dist_comm_get', a name the dist runtime reserves, as something else}}
  // expected-error @+1 {{failed to legalize operation 'dist.allreduce'}}
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}
