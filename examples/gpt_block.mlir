// A GPT-style block, one training step, on a [2, 4] mesh: data parallelism 2
// ("dp", axis 0) and tensor (model) parallelism 4 ("mp", axis 1).
//
// Global sizes: batch 8, sequence 16, hidden 64, FFN 256, vocabulary 1024.
// Every process holds the local shapes: batch 4 (split over dp), FFN 64 and
// vocabulary 256 (split over mp).
//
//   forward:  vocab-parallel embedding -> dropout -> column-parallel linear
//             -> row-parallel linear -> allreduce(mp) -> dropout
//   backward: the same in reverse, with the dp gradient sync of the linear
//             weights; the backward of a dropout is the dropout recomputed
//             with the forward mask (recompute_of names its forward twin)
//   AMP:      the step returns the weight gradients (results marked
//             dist.grad) and takes the loss scale (dist.loss_scale)
//
// This is the program *before* the auto-parallel rewrites:
//   dist-opt examples/gpt_block.mlir --dist-auto-parallel
// lowers the embedding (and adds the startup function that broadcasts the
// table), gives the dropouts shared seeds, inserts the AMP check and splits
// the column-parallel matmul_grad so its allreduce overlaps the dW matmul.
// Parameters are the arguments marked {dist.param = "<name>"}.

#mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>

func.func @train_step(
    %ids: tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>,
    %wemb: tensor<256x64xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "wemb"},
    %w1: tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1]>> {dist.param = "w1"},
    %w2: tensor<64x64xf32, #dist.tensor<#mesh, [1, -1]>> {dist.param = "w2"},
    %dout: tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>,
    %loss_scale: tensor<1xf32> {dist.loss_scale})
    -> (tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>,
        tensor<256x64xf32, #dist.tensor<#mesh, [1, -1]>> {dist.grad = "wemb"},
        tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1]>> {dist.grad = "w1"},
        tensor<64x64xf32, #dist.tensor<#mesh, [1, -1]>> {dist.grad = "w2"}) {
  // ---- forward ----
  %emb = dist.embedding %ids, %wemb
      : tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>,
        tensor<256x64xf32, #dist.tensor<#mesh, [1, -1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  %h0 = dist.dropout %emb prob = 1.000000e-01 {fix_seed = 11 : i32, id = "emb_drop"}
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  // Column-parallel linear: the output's hidden dim is split over mp.
  %h1 = dist.matmul %h0, %w1
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>,
        tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, 1]>>
  // Row-parallel linear: each process holds a partial sum over mp.
  %h2p = dist.matmul %h1, %w2
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, 1]>>,
        tensor<64x64xf32, #dist.tensor<#mesh, [1, -1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>
  %h2 = dist.allreduce %h2p on #mesh axes = [1] reduce = sum
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  %out = dist.dropout %h2 prob = 1.000000e-01 {id = "out_drop"}
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>

  // ---- backward ----
  %dh2 = dist.dropout %dout prob = 1.000000e-01 {recompute_of = "out_drop"}
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  %dh1, %dw2p = dist.matmul_grad %h1, %w2, %dh2
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, 1]>>,
        tensor<64x64xf32, #dist.tensor<#mesh, [1, -1]>>,
        tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, 1]>>,
         tensor<64x64xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>
  // Column-parallel backward: dX is partial over mp and needs an allreduce,
  // which --dist-matmul-grad-overlap overlaps with the dW matmul.
  %dh0p, %dw1p = dist.matmul_grad %h0, %w1, %dh1
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>,
        tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1]>>,
        tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, 1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>,
         tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
  %dh0 = dist.allreduce %dh0p on #mesh axes = [1] reduce = sum
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1], partial = [1 : sum]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  %demb = dist.dropout %dh0 prob = 1.000000e-01 {fix_seed = 11 : i32, recompute_of = "emb_drop"}
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
      -> tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
  %dwemb = dist.embedding_grad %ids, %wemb, %demb
      : tensor<4x16xi64, #dist.tensor<#mesh, [0, -1]>>,
        tensor<256x64xf32, #dist.tensor<#mesh, [1, -1]>>,
        tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>
      -> tensor<256x64xf32, #dist.tensor<#mesh, [1, -1]>>
  // Data-parallel gradient sync of the linear weights: sum, then average.
  %dw1s = dist.allreduce %dw1p on #mesh axes = [0] reduce = sum
      : tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1], partial = [0 : sum]>>
      -> tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1]>>
  %dw1 = dist.scale %dw1s by 5.000000e-01 : tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1]>>
  %dw2s = dist.allreduce %dw2p on #mesh axes = [0] reduce = sum
      : tensor<64x64xf32, #dist.tensor<#mesh, [1, -1], partial = [0 : sum]>>
      -> tensor<64x64xf32, #dist.tensor<#mesh, [1, -1]>>
  %dw2 = dist.scale %dw2s by 5.000000e-01 : tensor<64x64xf32, #dist.tensor<#mesh, [1, -1]>>

  return %out, %dwemb, %dw1, %dw2
      : tensor<4x16x64xf32, #dist.tensor<#mesh, [0, -1, -1]>>,
        tensor<256x64xf32, #dist.tensor<#mesh, [1, -1]>>,
        tensor<64x64xf32, #dist.tensor<#mesh, [-1, 1]>>,
        tensor<64x64xf32, #dist.tensor<#mesh, [1, -1]>>
}
