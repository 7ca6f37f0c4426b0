//===- DistOps.td - dist operations ------------------------*- tablegen -*-===//

#ifndef DIST_DIALECT_DIST_IR_DISTOPS_TD
#define DIST_DIALECT_DIST_IR_DISTOPS_TD

include "dist/Dialect/Dist/IR/DistBase.td"
include "dist/Dialect/Dist/IR/DistAttrs.td"
include "dist/Dialect/Dist/IR/DistInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def Dist_CollectiveResult : AnyTypeOf<[AnyRankedTensor, Dist_FutureType],
    "ranked tensor, or future of one for an asynchronous collective">;

// Collectives carry no side-effect trait on purpose: every process of a group
// must issue them in the same order, so canonicalize/CSE may neither delete an
// unused one nor merge two identical ones.
class Dist_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<Dist_CollectiveOpInterface>])> {
  code commonArgsFormat = [{
    $input `on` custom<MeshRef>($mesh) `axes` `=` $axes
  }];
  // What the op's types and attributes decide (its verifySignature) is
  // checked once per signature, what its uses decide (a future's wait) every
  // time; a collective that completion has yet to decide waits for it.
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      if (std::optional<::llvm::LogicalResult> r =
              verifyAwaitingCompletion(*this))
        return ::mlir::failed(*r) ? ::mlir::failure() : verifyAsync(*this);
      if (::mlir::failed(checkOncePerSignature(
              *this, [&] { return verifySignature(); })))
        return ::mlir::failure();
      return verifyAsync(*this);
    }
  }];
}

// An op whose verifier is what its types and attributes decide: its
// verifySignature(), which the op declares, run once per signature
// (SignatureCache.h). The verifier is defined here, once for all of them.
class Dist_SignatureVerifiedOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, traits> {
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return checkOncePerSignature(*this, [&] { return verifySignature(); });
    }
  }];
}

def Dist_AllReduceOp : Dist_CollectiveOp<"allreduce", [
    DeclareOpInterfaceMethods<Dist_RedistributionOpInterface,
                              ["getReduction"]>]> {
  let summary = "Reduce a partial tensor across the processes of a mesh group";
  let description = [{
    Every process of each group (processes whose coordinates differ only along
    `axes`) receives the reduction (`reduce`) of the group's inputs.

    When the operand carries a `#dist.tensor` encoding it must be partial with
    the same reduction kind on every axis in `axes`; the result has the same
    distribution with those axes no longer partial. One mix is allowed: an
    `avg` allreduce of a value partial with `sum` gives the mean of its
    partial terms (the sum divided by the group size), which is how data
    parallelism averages its replicas' gradients (Paddle's
    `c_allreduce_avg`). `stream` optionally names
    the stream the collective is issued on (absent means the compute stream).

    Example: the row-parallel matmul result reduced over the model-parallel
    axis of a `[2, 4]` mesh.

    ```mlir
    %r = dist.allreduce %p on #mesh axes = [1] reduce = sum
        : tensor<8x1024xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
        -> tensor<8x1024xf32, #dist.tensor<#mesh, [0, -1]>>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Dist_MeshAttr:$mesh,
    DenseI64ArrayAttr:$axes,
    Dist_ReductionKind:$kind,
    OptionalAttr<Dist_StreamKind>:$stream
  );
  let results = (outs Dist_CollectiveResult:$result);
  let assemblyFormat = commonArgsFormat # [{
    `reduce` `=` $kind (`stream` `=` $stream^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

def Dist_BroadcastOp : Dist_CollectiveOp<"broadcast", [
    DeclareOpInterfaceMethods<Dist_RedistributionOpInterface>]> {
  let summary = "Broadcast a tensor from a group-local root";
  let description = [{
    Every process of each group receives the input of the process at position
    `root` of its group (`root` is a group-local index, not a rank). The
    distribution is unchanged; the input may not be split or partial along
    `axes`.

    Example: parameter initialisation sync along the data-parallel axis.

    ```mlir
    %w1 = dist.broadcast %w on #mesh axes = [0] root = 0
        : tensor<8000x1024xf32, #dist.tensor<#mesh, [1, -1]>>
        -> tensor<8000x1024xf32, #dist.tensor<#mesh, [1, -1]>>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Dist_MeshAttr:$mesh,
    DenseI64ArrayAttr:$axes,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$root,
    OptionalAttr<Dist_StreamKind>:$stream
  );
  let results = (outs Dist_CollectiveResult:$result);
  let assemblyFormat = commonArgsFormat # [{
    `root` `=` $root (`stream` `=` $stream^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

def Dist_CIdentityOp : Dist_CollectiveOp<"c_identity"> {
  let summary = "Identity whose gradient is an allreduce over a mesh group";
  let description = [{
    Megatron's "copy to tensor-parallel region": the value passes through
    unchanged, and the op marks where the backward pass needs an allreduce
    over `axes`. The distribution is unchanged.

    ```mlir
    %g = dist.c_identity %dout on #mesh axes = [1]
        : tensor<4x8x1024xf32> -> tensor<4x8x1024xf32>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Dist_MeshAttr:$mesh,
    DenseI64ArrayAttr:$axes,
    OptionalAttr<Dist_StreamKind>:$stream
  );
  let results = (outs Dist_CollectiveResult:$result);
  let assemblyFormat = commonArgsFormat # [{
    (`stream` `=` $stream^)? attr-dict `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

//===----------------------------------------------------------------------===//
// Redistribution
//===----------------------------------------------------------------------===//

// The collectives that change a tensor's local shape. Their operand and
// result carry `#dist.tensor` encodings (which say what moves); per mesh axis
// in `axes` each allows its kind's transition (RedistributionKind.h), and
// every other axis keeps its state. The global shape is the same on both
// sides. `redistributionMethods` names the interface methods whose defaults the op
// overrides (getReduction, for an op that reduces).
class Dist_RedistributeOp<string mnemonic,
                          list<string> redistributionMethods = []>
    : Dist_CollectiveOp<mnemonic, [
        DeclareOpInterfaceMethods<Dist_RedistributionOpInterface,
                                  redistributionMethods>]> {
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

def Dist_AllGatherOp : Dist_RedistributeOp<"all_gather"> {
  let summary = "Gather the shards of split dims: split over axes → replicated";
  let description = [{
    Every process of each group receives the concatenation of the group's
    shards. Each mesh axis in `axes` splits a dim of the operand; in the
    result those dims are replicated on it, and everything else (other
    axes, partial axes) is unchanged. Lowered to `MPI_Allgather`
    (`MPI_Iallgather` when asynchronous), with the blocks of a dim other than
    the first unpacked after the exchange.

    ```mlir
    %r = dist.all_gather %x on #mesh axes = [1]
        : tensor<8x256xf32, #dist.tensor<#mesh, [0, 1]>>
        -> tensor<8x1024xf32, #dist.tensor<#mesh, [0, -1]>>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Dist_MeshAttr:$mesh,
    DenseI64ArrayAttr:$axes,
    OptionalAttr<Dist_StreamKind>:$stream
  );
  let results = (outs Dist_CollectiveResult:$result);
  let assemblyFormat = commonArgsFormat # [{
    (`stream` `=` $stream^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Dist_ReduceScatterOp : Dist_RedistributeOp<"reduce_scatter",
                                                ["getReduction"]> {
  let summary = "Reduce a partial tensor and keep one shard: partial → split";
  let description = [{
    The group's partial values are reduced with `reduce`, and each process
    keeps its shard of the reduction: each mesh axis in `axes` is partial in
    the operand (with `reduce`, or `sum` for an `avg`) and splits a dim in
    the result that the operand does not split. Half the bytes of an
    allreduce, and the shard is reduced before it is sliced (never the other
    way round). Lowered to `MPI_Reduce_scatter_block`.

    ```mlir
    %r = dist.reduce_scatter %p on #mesh axes = [1] reduce = sum
        : tensor<8x1024xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
        -> tensor<2x1024xf32, #dist.tensor<#mesh, [0, 1]>>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Dist_MeshAttr:$mesh,
    DenseI64ArrayAttr:$axes,
    Dist_ReductionKind:$kind,
    OptionalAttr<Dist_StreamKind>:$stream
  );
  let results = (outs Dist_CollectiveResult:$result);
  let assemblyFormat = commonArgsFormat # [{
    `reduce` `=` $kind (`stream` `=` $stream^)? attr-dict
    `:` type($input) `->` type($result)
  }];
}

def Dist_AllToAllOp : Dist_RedistributeOp<"all_to_all"> {
  let summary = "Move a split from one dim to another over the same mesh axis";
  let description = [{
    `axes` is one mesh axis; it splits a dim of the operand and another dim
    of the result (which the operand does not split). Each process sends the
    group member at position `q` the `q`-th block of its shard along the new
    dim: no process ever holds more than its shard. Lowered to
    `MPI_Alltoall`.

    ```mlir
    %r = dist.all_to_all %x on #mesh axes = [0]
        : tensor<2x8xf32, #dist.tensor<#mesh, [0, -1]>>
        -> tensor<8x2xf32, #dist.tensor<#mesh, [-1, 0]>>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Dist_MeshAttr:$mesh,
    DenseI64ArrayAttr:$axes,
    OptionalAttr<Dist_StreamKind>:$stream
  );
  let results = (outs Dist_CollectiveResult:$result);
  let assemblyFormat = commonArgsFormat # [{
    (`stream` `=` $stream^)? attr-dict `:` type($input) `->` type($result)
  }];
}

// Local redistributions: each process computes its result from its own
// operand and its coordinates, with no communication.
class Dist_LocalRedistributeOp<string mnemonic,
                               list<string> redistributionMethods = []>
    : Dist_Op<mnemonic, [Pure,
        DeclareOpInterfaceMethods<Dist_RedistributionOpInterface,
                                  redistributionMethods>]> {
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::LogicalResult verifySignature();
  }];
}

def Dist_AllSliceOp : Dist_LocalRedistributeOp<"all_slice"> {
  let summary = "Keep this process's shard: replicated → split, locally";
  let description = [{
    Each mesh axis in `axes` leaves the operand replicated (neither split nor
    partial) and splits a dim of the result; each process keeps the block of
    that dim at its coordinate along the axis. No communication.

    ```mlir
    %s = dist.all_slice %x on #mesh axes = [1]
        : tensor<8x1024xf32, #dist.tensor<#mesh, [0, -1]>>
        -> tensor<8x256xf32, #dist.tensor<#mesh, [0, 1]>>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Dist_MeshAttr:$mesh,
    DenseI64ArrayAttr:$axes
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` custom<MeshRef>($mesh) `axes` `=` $axes attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Dist_MakePartialOp : Dist_LocalRedistributeOp<"make_partial",
                                                   ["getReduction"]> {
  let summary = "View a complete value as partial terms of a reduction, locally";
  let description = [{
    Each mesh axis in `axes` is not partial in the operand and is partial
    with `reduce` in the result; a dim that the axis splits in the operand
    is whole in the result. Each process makes terms whose reduction over
    the group is the operand's global value: a replicated operand gives the
    value itself for `max`, `min` and `avg`, and on the processes at
    coordinate 0 only (the identity elsewhere) for `sum` and `prod`; a split
    operand gives its shard in its block and the reduction's identity
    around it (for `avg`, the shard times the group size). No communication.

    ```mlir
    %p = dist.make_partial %x on #mesh axes = [1] reduce = sum
        : tensor<8x256xf32, #dist.tensor<#mesh, [0, 1]>>
        -> tensor<8x1024xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Dist_MeshAttr:$mesh,
    DenseI64ArrayAttr:$axes,
    Dist_ReductionKind:$kind
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` custom<MeshRef>($mesh) `axes` `=` $axes `reduce` `=` $kind
    attr-dict `:` type($input) `->` type($result)
  }];
}

def Dist_ReshardOp : Dist_Op<"reshard", [Pure]> {
  let summary = "Change a tensor's distribution to any other of the same mesh";
  let description = [{
    The logical redistribution: the result holds the operand's global value
    with the result type's distribution, on the same mesh. Nothing lowers it
    directly: `--dist-lower-reshard` replaces it with the collectives and
    local steps of the cheapest plan the cost model finds. A reshard to its
    own type folds away, and a reshard of a reshard is one reshard.

    ```mlir
    %r = dist.reshard %x
        : tensor<8x256xf32, #dist.tensor<#mesh, [0, 1]>>
        -> tensor<4x512xf32, #dist.tensor<#mesh, [1, 0]>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Dist_ConstraintOp : Dist_Op<"constraint", [Pure]> {
  let summary = "Pin a value's distribution for completion";
  let description = [{
    States that `input` has the distribution its result type carries: in a
    function marked `dist.complete`, `--dist-complete` takes it as a written
    encoding of `input` (an undecided `input` gets it, and the ops around
    are completed to agree, with reshards where the cost model puts them;
    an `input` decided otherwise is resharded to it, with a remark), then
    replaces the constraint with its operand. Outside a marked function it
    only states what holds: the types must be equal, and it folds away. It
    keeps the local shape (a constraint moves no data; `dist.reshard`
    does), and it is never lowered: the passes after completion refuse a
    constraint that is left.

    ```mlir
    %y = dist.matmul %x, %w : ... -> tensor<64x4096xf32>
    %c = dist.constraint %y : tensor<64x4096xf32>
        -> tensor<64x4096xf32, #dist.tensor<#mesh, [-1, -1]>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dist_WaitOp : Dist_Op<"wait", [
    TypesMatchWith<"result is the value type of the future", "future", "result",
                   "::llvm::cast<::mlir::dist::FutureType>($_self).getValueType()">]> {
  let summary = "Completion point of an asynchronous collective or receive";
  let description = [{
    Blocks the compute stream until the collective (or the `dist.recv`) that
    produced `future` has finished, and yields its result. Every asynchronous collective has
    exactly one wait, in its own block; `--dist-assign-streams` places it
    right before the first use of the result, so the communication overlaps
    everything issued in between.

    ```mlir
    %f = dist.allreduce %x on #mesh axes = [1] reduce = sum stream = mp
        : tensor<8x64xf32> -> !dist.future<tensor<8x64xf32>>
    %y = dist.matmul %a, %b : ...          // overlaps the allreduce
    %r = dist.wait %f : !dist.future<tensor<8x64xf32>>
    ```
  }];
  let arguments = (ins Dist_FutureType:$future);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$future attr-dict `:` qualified(type($future))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Point-to-point transfers between pipeline stages
//===----------------------------------------------------------------------===//

// Like collectives, transfers carry no side-effect trait: a send and its
// receive must both stay, in their order.
class Dist_TransferOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, traits> {
  code commonArgsFormat = [{
    $peer `on` custom<MeshRef>($mesh) `axis` `=` $axis `tag` `=` $tag
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The transferred tensor's type (a receive's future unwrapped).
    ::mlir::RankedTensorType getTensorType();
  }];
}

def Dist_SendOp : Dist_TransferOp<"send"> {
  let summary = "Send a tensor to the process at another coordinate of a mesh axis";
  let description = [{
    Sends `input` to the process whose coordinates equal this process's
    except along mesh axis `axis`, where it is `peer`: the next or previous
    pipeline stage. `tag` names the message between the two processes; the
    receive with the same tag on the peer takes it. The send blocks until
    that receive is posted (rendezvous: `--dist-verify-pipeline` proves that
    no program relies on buffering), so transfers only appear inside a
    stage's program (a case of an `scf.index_switch` on the
    `dist.process_coord` of `axis`), where the sender's coordinate is known.

    The value is the same tensor on both sides: an encoding may split it or
    make it partial over other axes, never over `axis`.

    ```mlir
    dist.send %h to 1 on #mesh axis = 0 tag = 3
        : tensor<8x64xf32, #dist.tensor<#mesh, [-1, 1]>>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$peer,
    Dist_MeshAttr:$mesh,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$axis,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$tag
  );
  let assemblyFormat = "$input `to` " # commonArgsFormat #
                       "attr-dict `:` type($input)";
}

def Dist_RecvOp : Dist_TransferOp<"recv"> {
  let summary = "Receive a tensor from the process at another coordinate of a mesh axis";
  let description = [{
    Receives the tensor that the process at coordinate `peer` along mesh
    axis `axis` (this process's coordinates elsewhere) sends with `tag`.
    With a tensor result the receive blocks until the message arrives; with
    a `!dist.future` result it is only posted, and its one `dist.wait`, in
    the same block, yields the tensor. Posting a receive early is what lets
    a peer's blocking send return: `--dist-pipeline` posts each receive an
    action ahead of the one that reads it.

    ```mlir
    %f = dist.recv from 0 on #mesh axis = 0 tag = 3
        : !dist.future<tensor<8x64xf32, #dist.tensor<#mesh, [-1, 1]>>>
    ...
    %h = dist.wait %f : !dist.future<tensor<8x64xf32, #dist.tensor<#mesh, [-1, 1]>>>
    ```
  }];
  let arguments = (ins
    ConfinedAttr<I64Attr, [IntNonNegative]>:$peer,
    Dist_MeshAttr:$mesh,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$axis,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$tag
  );
  let results = (outs Dist_CollectiveResult:$result);
  let assemblyFormat = "`from` " # commonArgsFormat #
                       "attr-dict `:` type($result)";
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType();
    bool isAsync() { return ::llvm::isa<FutureType>(getResult().getType()); }
  }];
}

//===----------------------------------------------------------------------===//
// Rank-dependent values
//===----------------------------------------------------------------------===//

def Dist_ProcessCoordOp : Dist_Op<"process_coord", [Pure]> {
  let summary = "This process's coordinate along a mesh axis";
  let description = [{
    Returns the coordinate of the executing process along mesh axis `axis`:
    the row-major unravel of the process's position in the mesh's process-id
    list. Folds to `0` when the axis has size 1; `--dist-specialize-rank`
    folds it for one process.

    ```mlir
    %c = dist.process_coord #mesh axis = 1
    ```
  }];
  let arguments = (ins
    Dist_MeshAttr:$mesh,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$axis
  );
  let results = (outs Index:$result);
  let assemblyFormat = "custom<MeshRef>($mesh) `axis` `=` $axis attr-dict";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dist_SeedOp : Dist_Op<"seed"> {
  let summary = "A random seed shared by a dropout and its recomputation";
  let description = [{
    Produces the seed consumed by `dist.dropout`. A `value` of 0 means "draw a
    seed at run time"; the op is therefore not pure, so CSE never merges two
    seeds.

    ```mlir
    %s = dist.seed 42 : tensor<1xi32, #dist.tensor<#mesh, [-1]>>
    ```
  }];
  let arguments = (ins I32Attr:$value);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sharded compute
//===----------------------------------------------------------------------===//

def Dist_CEmbeddingOp : Dist_SignatureVerifiedOp<"c_embedding", [Pure,
    DeclareOpInterfaceMethods<Dist_DistributionRuleInterface, ["appendRuleAttributes"]>]> {
  let summary = "Embedding lookup into one shard of a row-split table";
  let description = [{
    Looks up `ids` in the local rows `[start_index, start_index + rows)` of a
    row-split (vocab-parallel) embedding table; ids outside that range give
    zero rows. The result is partial (sum) over the axis that splits the
    rows: an allreduce completes it. `start_index` is rank-dependent and so an
    SSA value, normally computed from `dist.process_coord`.

    ```mlir
    %e = dist.c_embedding %ids, %w start = %start
        : tensor<4x16xi64>, tensor<8000x1024xf32> -> tensor<4x16x1024xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyInteger]>:$ids,
    AnyRankedTensor:$weight,
    Index:$start_index
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $ids `,` $weight `start` `=` $start_index attr-dict
    `:` type($ids) `,` type($weight) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

def Dist_CEmbeddingGradOp : Dist_SignatureVerifiedOp<"c_embedding_grad", [Pure,
    DeclareOpInterfaceMethods<Dist_DistributionRuleInterface, ["appendRuleAttributes"]>]> {
  let summary = "Gradient of a sharded embedding lookup";
  let description = [{
    Accumulates the rows of `out_grad` into a zero tensor shaped like the
    local weight shard, at row `id - start_index` for every id that falls in
    the shard; other ids contribute nothing.

    ```mlir
    %dw = dist.c_embedding_grad %ids, %w, %dout start = %start
        : tensor<4x16xi64>, tensor<8000x1024xf32>, tensor<4x16x1024xf32>
        -> tensor<8000x1024xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyInteger]>:$ids,
    AnyRankedTensor:$weight,
    AnyRankedTensor:$out_grad,
    Index:$start_index
  );
  let results = (outs AnyRankedTensor:$weight_grad);
  let assemblyFormat = [{
    $ids `,` $weight `,` $out_grad `start` `=` $start_index attr-dict
    `:` type($ids) `,` type($weight) `,` type($out_grad) `->` type($weight_grad)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

//===----------------------------------------------------------------------===//
// Logical ops that the passes rewrite
//===----------------------------------------------------------------------===//

def Dist_MatmulOp : Dist_SignatureVerifiedOp<"matmul", [Pure,
    DeclareOpInterfaceMethods<Dist_DistributionRuleInterface, ["appendRuleAttributes"]>]> {
  let summary = "Batched matrix product with optional transposes";
  let description = [{
    Paddle's `matmul_v2`: `result = op(x) * op(y)` over the last two
    dimensions, where `op` transposes them when `transpose_x`/`transpose_y`
    is set. Both operands have rank >= 2; leading (batch) dimensions broadcast
    (equal, or 1, or missing), so a 2-D `y` is applied to every batch of `x`.

    ```mlir
    %dx = dist.matmul %dout, %y transpose_y
        : tensor<4x8x64xf32>, tensor<1024x64xf32> -> tensor<4x8x1024xf32>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$x,
    AnyRankedTensor:$y,
    UnitAttr:$transpose_x,
    UnitAttr:$transpose_y
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $x `,` $y (`transpose_x` $transpose_x^)? (`transpose_y` $transpose_y^)?
    attr-dict `:` type($x) `,` type($y) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

def Dist_MatmulGradOp : Dist_SignatureVerifiedOp<"matmul_grad", [Pure,
    DeclareOpInterfaceMethods<Dist_DistributionRuleInterface, ["appendRuleAttributes"]>]> {
  let summary = "Gradients of dist.matmul with respect to both operands";
  let description = [{
    Paddle's `matmul_v2_grad`: given the forward operands and `out_grad`
    (shaped like the forward result), computes `x_grad` and `y_grad`, shaped
    like `x` and `y`. For `transpose_x = transpose_y = false` this is
    `x_grad = out_grad * y^T` and `y_grad = x^T * out_grad` (summed over
    broadcast batch dimensions).

    ```mlir
    %dx, %dy = dist.matmul_grad %x, %y, %dout
        : tensor<4x8x1024xf32>, tensor<1024x64xf32>, tensor<4x8x64xf32>
        -> tensor<4x8x1024xf32>, tensor<1024x64xf32>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$x,
    AnyRankedTensor:$y,
    AnyRankedTensor:$out_grad,
    UnitAttr:$transpose_x,
    UnitAttr:$transpose_y
  );
  let results = (outs AnyRankedTensor:$x_grad, AnyRankedTensor:$y_grad);
  let assemblyFormat = [{
    $x `,` $y `,` $out_grad (`transpose_x` $transpose_x^)?
    (`transpose_y` $transpose_y^)? attr-dict
    `:` type($x) `,` type($y) `,` type($out_grad)
    `->` type($x_grad) `,` type($y_grad)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

def Dist_EmbeddingOp : Dist_SignatureVerifiedOp<"embedding", [Pure,
    DeclareOpInterfaceMethods<Dist_DistributionRuleInterface, ["appendRuleAttributes"]>]> {
  let summary = "Embedding lookup (logical, before vocab-parallel lowering)";
  let description = [{
    `result[i..., :] = weight[ids[i...], :]`. When the weight's rows are
    split over a mesh axis, `--dist-parallel-embedding` lowers it to
    `dist.c_embedding` and an allreduce.

    ```mlir
    %e = dist.embedding %ids, %w
        : tensor<4x16xi64>, tensor<8000x1024xf32, #dist.tensor<#mesh, [1, -1]>>
        -> tensor<4x16x1024xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyInteger]>:$ids,
    AnyRankedTensor:$weight
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $ids `,` $weight attr-dict `:` type($ids) `,` type($weight) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

def Dist_EmbeddingGradOp : Dist_SignatureVerifiedOp<"embedding_grad", [Pure,
    DeclareOpInterfaceMethods<Dist_DistributionRuleInterface, ["appendRuleAttributes"]>]> {
  let summary = "Gradient of dist.embedding with respect to the table";
  let description = [{
    Scatter-adds the rows of `out_grad` into a zero tensor shaped like
    `weight`, at the rows named by `ids`.

    Over ids split along a mesh axis each process adds the rows of its own
    ids: the result is a partial sum over that axis, completed by an
    allreduce, as the serial program's sum over every id requires. For a
    table whose rows are split, the result may instead be declared without
    that partial sum, as Paddle writes a data-parallel program (each
    replica's `out_grad` is the gradient of its own mean loss):
    `--dist-parallel-embedding` then sums the replicas' gradients and, over
    the ids' batch axis, scales by 1/size.

    ```mlir
    %dw = dist.embedding_grad %ids, %w, %dout
        : tensor<4x16xi64>, tensor<8000x1024xf32>, tensor<4x16x1024xf32>
        -> tensor<8000x1024xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyInteger]>:$ids,
    AnyRankedTensor:$weight,
    AnyRankedTensor:$out_grad
  );
  let results = (outs AnyRankedTensor:$weight_grad);
  let assemblyFormat = [{
    $ids `,` $weight `,` $out_grad attr-dict
    `:` type($ids) `,` type($weight) `,` type($out_grad) `->` type($weight_grad)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

// Dropout draws random numbers (from its seed operand, or from a run-time
// seed), so it carries no Pure trait: CSE must not merge two dropouts.
def Dist_DropoutOp : Dist_SignatureVerifiedOp<"dropout",
    [AllTypesMatch<["input", "result"]>,
     DeclareOpInterfaceMethods<Dist_DistributionRuleInterface, ["appendRuleAttributes"]>]> {
  let summary = "Randomly zero elements with probability `prob`";
  let description = [{
    Paddle's `dropout` (upscale-in-train): each element is zeroed with
    probability `prob` and the others are scaled by `1 / (1 - prob)`; with
    `is_test` it is the identity.

    The random mask comes from the `seed` operand when present (a
    `tensor<1xi32>`, normally from `dist.seed`), else from `fix_seed` when
    set, else from a run-time random seed. A seed operand and `fix_seed`
    together are rejected: which one wins would be ambiguous.

    Recomputation: a forward dropout may be named with `id`; its copy
    recomputed in the backward part names it with `recompute_of` and must
    draw the same mask. `--dist-dropout-seed` gives both the same
    `dist.seed` value and rejects twins whose seeds differ. A dropout is
    either a named original or a recomputation, not both.

    ```mlir
    %s = dist.seed 7 : tensor<1xi32>
    %y = dist.dropout %x seed(%s : tensor<1xi32>) prob = 1.000000e-01
        : tensor<4x16x1024xf32> -> tensor<4x16x1024xf32>
    %z = dist.dropout %x prob = 1.000000e-01 {fix_seed = 7 : i32, id = "attn"}
        : tensor<4x16x1024xf32> -> tensor<4x16x1024xf32>
    %r = dist.dropout %x prob = 1.000000e-01 {fix_seed = 7 : i32, recompute_of = "attn"}
        : tensor<4x16x1024xf32> -> tensor<4x16x1024xf32>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Optional<RankedTensorOf<[I32]>>:$seed,
    F32Attr:$prob,
    OptionalAttr<I32Attr>:$fix_seed,
    UnitAttr:$is_test,
    OptionalAttr<StrAttr>:$id,
    OptionalAttr<StrAttr>:$recompute_of
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input (`seed` `(` $seed^ `:` type($seed) `)`)? `prob` `=` $prob attr-dict
    `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

def Dist_ScaleOp : Dist_Op<"scale", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Dist_DistributionRuleInterface, ["appendRuleAttributes"]>]> {
  let summary = "Multiply every element by a constant";
  let description = [{
    Paddle's `scale` (with zero bias): used for example to average a gradient
    after a data-parallel sum.

    ```mlir
    %avg = dist.scale %g by 5.000000e-01 : tensor<8000x1024xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$input,
    F64Attr:$factor
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input `by` $factor attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dist_CheckFiniteAndUnscaleOp : Dist_SignatureVerifiedOp<"check_finite_and_unscale", [Pure,
    DeclareOpInterfaceMethods<Dist_DistributionRuleInterface, ["appendRuleAttributes"]>]> {
  let summary = "AMP: unscale gradients and detect infinities or NaNs";
  let description = [{
    Divides every gradient by the loss `scale` and sets `found_inf` when any
    element of any gradient is infinite or NaN. Gradients must be f16, f32 or
    f64 tensors; each output has its gradient's type. `scale` is a
    one-element float tensor and `found_inf` a one-element `i1` tensor.

    ```mlir
    %g0u, %g1u, %inf = dist.check_finite_and_unscale %g0, %g1 scale %s
        : (tensor<64xf16>, tensor<8x8xf32>, tensor<1xf32>)
        -> (tensor<64xf16>, tensor<8x8xf32>, tensor<1xi1>)
    ```
  }];
  let arguments = (ins
    Variadic<AnyRankedTensor>:$grads,
    RankedTensorOf<[AnyFloat]>:$scale
  );
  let results = (outs
    Variadic<AnyRankedTensor>:$outputs,
    RankedTensorOf<[I1]>:$found_inf
  );
  let assemblyFormat = [{
    $grads `scale` $scale attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}


//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

// An optimizer update is elementwise over a parameter, its gradient and its
// states, which all have one type; the step is one scalar. Being ops (rather
// than a pattern of linalg.generics) lets --dist-shard-optimizer find the
// parameter, the gradient and the states without matching arithmetic.
class Dist_OptimizerOp<string mnemonic, list<Trait> traits = []>
    : Dist_SignatureVerifiedOp<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<Dist_DistributionRuleInterface,
                                  ["appendRuleAttributes"]>])> {
  let extraClassDeclaration = [{
    /// The part of the verifier that only the op's types and attributes
    /// decide, run once per signature.
    ::llvm::LogicalResult verifySignature();
  }];
}

def Dist_SgdOp : Dist_OptimizerOp<"sgd", [
    AllShapesMatch<["param", "grad", "velocity", "new_param", "new_velocity"]>,
    AllElementTypesMatch<["param", "grad", "velocity", "new_param",
                          "new_velocity"]>]> {
  let summary = "SGD with momentum and weight decay (one step)";
  let description = [{
    One step of stochastic gradient descent with momentum (Paddle's
    `momentum`, PyTorch's `SGD` without dampening or Nesterov):

    ```
    d             = grad + weight_decay * param
    new_velocity  = momentum * velocity + d
    new_param     = param - lr * new_velocity
    ```

    With `momentum = 0` it is plain SGD and the velocity is the last
    update. Every operand and result has one shape and element type and is
    distributed alike; the gradient must be complete (not partial): the
    update is not linear in it once the velocity is kept. `lr` and `weight_decay` are finite and
    `weight_decay >= 0`; `momentum` is in [0, 1).

    The velocity is optimizer state: in a step function it is an argument
    and a result marked `{dist.state = "<parameter>"}`, which
    `--dist-shard-optimizer` shards over the data-parallel axis.

    ```mlir
    %w1, %v1 = dist.sgd %w, %g, %v lr = 1.000000e-01 momentum = 9.000000e-01
        : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
        -> (tensor<64x64xf32>, tensor<64x64xf32>)
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$param,
    RankedTensorOf<[AnyFloat]>:$grad,
    RankedTensorOf<[AnyFloat]>:$velocity,
    F64Attr:$lr,
    F64Attr:$momentum,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_decay
  );
  let results = (outs
    RankedTensorOf<[AnyFloat]>:$new_param,
    RankedTensorOf<[AnyFloat]>:$new_velocity
  );
  let assemblyFormat = [{
    $param `,` $grad `,` $velocity `lr` `=` $lr `momentum` `=` $momentum
    (`weight_decay` `=` $weight_decay^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

def Dist_AdamWOp : Dist_OptimizerOp<"adamw", [
    AllShapesMatch<["param", "grad", "moment1", "moment2", "new_param",
                    "new_moment1", "new_moment2"]>,
    AllElementTypesMatch<["param", "grad", "moment1", "moment2", "new_param",
                          "new_moment1", "new_moment2"]>]> {
  let summary = "AdamW (one step, decoupled weight decay)";
  let description = [{
    One step of AdamW (Loshchilov and Hutter; Paddle's `adamw`, PyTorch's
    `AdamW`), at step `step` (a rank-0 float tensor counting from 1, which
    gives the bias corrections):

    ```
    p            = param * (1 - lr * weight_decay)
    new_moment1  = beta1 * moment1 + (1 - beta1) * grad
    new_moment2  = beta2 * moment2 + (1 - beta2) * grad^2
    m_hat        = new_moment1 / (1 - beta1^step)
    v_hat        = new_moment2 / (1 - beta2^step)
    new_param    = p - lr * m_hat / (sqrt(v_hat) + epsilon)
    ```

    The parameter, gradient, moments and results have one shape and element
    type and are distributed alike; the gradient must be complete (not partial), and `step` the same
    on every process. `lr` is finite, `beta1` and `beta2` are in [0, 1),
    `epsilon > 0` and `weight_decay >= 0`.

    The moments are optimizer state: arguments and results marked
    `{dist.state = "<parameter>"}` (first moment, then second).

    ```mlir
    %b1, %m1, %v1 = dist.adamw %b, %g, %m, %v, %t lr = 1.000000e-03
        beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 1.000000e-08
        weight_decay = 1.000000e-02
        : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>,
           tensor<f32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$param,
    RankedTensorOf<[AnyFloat]>:$grad,
    RankedTensorOf<[AnyFloat]>:$moment1,
    RankedTensorOf<[AnyFloat]>:$moment2,
    0DTensorOf<[AnyFloat]>:$step,
    F64Attr:$lr,
    F64Attr:$beta1,
    F64Attr:$beta2,
    F64Attr:$epsilon,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_decay
  );
  let results = (outs
    RankedTensorOf<[AnyFloat]>:$new_param,
    RankedTensorOf<[AnyFloat]>:$new_moment1,
    RankedTensorOf<[AnyFloat]>:$new_moment2
  );
  let assemblyFormat = [{
    $param `,` $grad `,` $moment1 `,` $moment2 `,` $step `lr` `=` $lr
    `beta1` `=` $beta1 `beta2` `=` $beta2 `epsilon` `=` $epsilon
    (`weight_decay` `=` $weight_decay^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Packing tensors into flat buffers
//===----------------------------------------------------------------------===//

def Dist_PackOp : Dist_Op<"pack", [Pure]> {
  let summary = "Flatten tensors into one buffer of equal rows, padded";
  let description = [{
    Packs the *local* tensors `inputs` into a 2-D buffer of `R` rows (the
    result's first dim): each input is flattened (row-major), padded with
    zeros to a multiple of `R` elements and cut into `R` equal chunks, and
    row `r` of the result is the concatenation of every input's chunk `r`.
    The result's second dim is the sum of the chunk lengths
    (`ceil(numel / R)` per input). `dist.unpack` is its inverse.

    With `R` the size of a data-parallel group, a reduce-scatter of the
    buffer over that group leaves each process row `r`: the `r`-th shard of
    every input, of equal size whatever the inputs' shapes. So parameters
    whose sizes do not divide by the group are sharded without replicating
    anything; only the padding (fewer than `R` elements per input) is
    added. With `R = 1` it concatenates: one collective for many tensors.

    Distribution: the inputs share one element type, one mesh, the same
    partial axes and kinds, and the same set of mesh axes splitting them
    (on any dims); the result has those partial axes and is split over
    that set of axes, on any of its dims. The result's global value is the
    processes' buffers in mesh order: a collective over an axis that does
    not split the inputs sees equal-shaped buffers whose row `r` is the
    `r`-th chunk on every process.

    ```mlir
    %b = dist.pack %w, %bias : tensor<13x8xf32>, tensor<7xf32>
        -> tensor<2x56xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dist_UnpackOp : Dist_Op<"unpack", [Pure]> {
  let summary = "Take tensors out of a buffer of rows: dist.pack's inverse";
  let description = [{
    The inverse of `dist.pack`: the operand is a 2-D buffer of `R` rows,
    and result `i` takes its chunk from every row (the chunks in result
    order, `ceil(numel_i / R)` elements each), concatenates them, drops the
    padding and takes its own shape. The sum of the chunk lengths must be
    the operand's second dim.

    With `R = 1` it cuts one row into pieces: after a reduce-scatter of a
    packed bucket, each process's row holds its shard of every tensor of
    the bucket, and unpacking the row gives each tensor's shard (as a
    `1 x chunk` tensor).

    Distribution: as `dist.pack`'s, from the operand to the results.

    ```mlir
    %w, %bias = dist.unpack %b : tensor<2x56xf32>
        -> tensor<13x8xf32>, tensor<7xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // DIST_DIALECT_DIST_IR_DISTOPS_TD
