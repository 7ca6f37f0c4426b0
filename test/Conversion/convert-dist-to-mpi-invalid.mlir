// RUN: dist-opt %s --convert-dist-to-mpi="world-size=4" -split-input-file -verify-diagnostics

#mesh = #dist.mesh<shape = [2]>
func.func @wrong_size(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{mesh #dist.mesh<shape = [2]> has 2 processes but the program runs on 4}}
  %a = dist.allreduce %x on #mesh axes = [0] reduce = sum : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

#mesh = #dist.mesh<shape = [4], process_ids = [0, 1, 2, 7]>
func.func @id_outside_world() -> index {
  // expected-error @+1 {{has 4 processes but the program runs on 4}}
  %c = dist.process_coord #mesh axis = 0
  return %c : index
}

// -----

#mesh = #dist.mesh<shape = [4]>
func.func @avg_of_ints(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{an avg allreduce of integers cannot be lowered}}
  %a = dist.allreduce %x on #mesh axes = [0] reduce = avg : tensor<4xi32> -> tensor<4xi32>
  return %a : tensor<4xi32>
}

// -----

func.func @compute_left(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.scale' cannot be lowered to MPI: run --convert-dist-to-linalg first}}
  %s = dist.scale %x by 2.0 : tensor<4xf32>
  return %s : tensor<4xf32>
}
