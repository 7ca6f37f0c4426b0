// Process 0 sends N floats to process 1, which prints them. Built twice
// with two values of N and run together (one executable per rank), the two
// programs disagree on the transfer, which no compile-time check can see.
#mesh = #dist.mesh<shape = [2], names = ["pp"]>
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c = dist.process_coord #mesh axis = 0
  scf.index_switch %c
  case 0 {
    %v = arith.constant dense<1.0> : tensor<Nxf32>
    dist.send %v to 1 on #mesh axis = 0 tag = 0 : tensor<Nxf32>
    scf.yield
  }
  default {
    %f = dist.recv from 0 on #mesh axis = 0 tag = 0 : !dist.future<tensor<Nxf32>>
    %r = dist.wait %f : !dist.future<tensor<Nxf32>>
    %m = bufferization.to_buffer %r : tensor<Nxf32> to memref<Nxf32>
    %u = memref.cast %m : memref<Nxf32> to memref<*xf32>
    func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    scf.yield
  }
  return
}
