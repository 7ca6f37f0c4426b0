//===- DistAttrs.td - dist attributes ----------------------*- tablegen -*-===//

#ifndef DIST_DIALECT_DIST_IR_DISTATTRS_TD
#define DIST_DIALECT_DIST_IR_DISTATTRS_TD

include "dist/Dialect/Dist/IR/DistBase.td"
include "mlir/IR/TensorEncoding.td"

def Dist_MeshAttr : Dist_Attr<"Mesh", "mesh"> {
  let summary = "A logical n-dimensional mesh of processes";
  let description = [{
    A process mesh arranges `product(shape)` processes in an n-dimensional
    grid. `process_ids` lists the process (MPI rank) at each mesh position in
    row-major order; it defaults to `0 .. N-1` and is printed only when it
    differs from that. `names` optionally names each mesh axis (for example
    `"dp"` for data parallelism and `"mp"` for model parallelism); passes use
    the names to tell the role of an axis.

    A process's *coordinate* is the row-major unravel of its position in
    `process_ids`, not of its rank: in the mesh below, process 6 sits at
    position 1 and so has coordinate `(0, 1)`.

    The dialect prints meshes as aliases (`#mesh`, `#mesh1`, ...).

    Example:

    ```mlir
    #mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
    #permuted = #dist.mesh<shape = [2, 4], process_ids = [7, 6, 5, 4, 3, 2, 1, 0]>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "mesh shape">:$shape,
    ArrayRefParameter<"int64_t", "process id at each mesh position">:$processIds,
    ArrayRefParameter<"::mlir::StringAttr", "axis names (empty or one per axis)">:$names
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    // Meshes with the default process ids 0 .. N-1 and no axis names.
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape)>
  ];
  let extraClassDeclaration = [{
    /// Number of mesh axes.
    int64_t getRank() const { return getShape().size(); }
    /// Number of processes in the mesh.
    int64_t getNumProcesses() const;
    /// Size of mesh axis `axis`; the axis must be in range.
    int64_t getAxisSize(int64_t axis) const { return getShape()[axis]; }
    /// Whether process ids are the default 0 .. N-1.
    bool hasDefaultProcessIds() const;
  }];
}

def Dist_TensorDistAttr : Dist_Attr<"TensorDist", "tensor",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "Distribution of a tensor over a process mesh (a tensor encoding)";
  let description = [{
    Attached as the encoding of a `RankedTensorType`, it says how the
    per-process (local) tensor relates to the logical (global) one:

    * `dims_mapping` has one entry per tensor dimension: the mesh axis that
      splits the dimension, or `-1` when the dimension is replicated. A mesh
      axis splits at most one dimension.
    * `partial` lists mesh axes along which each process holds a partial
      result still to be reduced with the given kind (`sum`, `max`, `min`,
      `prod`, `avg`). A partial axis does not also split a dimension.

    The local shape of a dimension mapped to axis `a` is the global size
    divided by the size of `a`.

    Example: a `[2, 4]` mesh holding a weight split by rows over axis 1 and a
    matmul result that still needs a sum over axis 1:

    ```mlir
    #mesh = #dist.mesh<shape = [2, 4], names = ["dp", "mp"]>
    tensor<8000x1024xf32, #dist.tensor<#mesh, [1, -1]>>
    tensor<8x1024xf32, #dist.tensor<#mesh, [0, -1], partial = [1 : sum]>>
    ```
  }];
  let parameters = (ins
    "::mlir::dist::MeshAttr":$mesh,
    ArrayRefParameter<"int64_t", "mesh axis per tensor dim, or -1">:$dimsMapping,
    ArrayRefParameter<"int64_t", "partial mesh axes, ascending">:$partialAxes,
    ArrayRefParameter<"::mlir::dist::ReductionKind",
                      "reduction pending on each partial axis">:$partialKinds
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilderWithInferredContext<(ins
      "::mlir::dist::MeshAttr":$mesh,
      "::llvm::ArrayRef<int64_t>":$dimsMapping,
      CArg<"::llvm::ArrayRef<std::pair<int64_t, ::mlir::dist::ReductionKind>>",
           "{}">:$partial)>
  ];
  let extraClassDeclaration = [{
    /// The fully replicated distribution of a rank-`rank` tensor on `mesh`.
    static TensorDistAttr getReplicated(MeshAttr mesh, int64_t rank);
    /// Whether no dim is split and no axis partial.
    bool isReplicated() const;
    /// The mesh axis splitting tensor dimension `dim`, or -1.
    int64_t getMeshAxis(int64_t dim) const { return getDimsMapping()[dim]; }
    /// The tensor dimension split over mesh axis `axis`, if any.
    std::optional<int64_t> getDimOfMeshAxis(int64_t axis) const;
    /// The mesh axes that split a dim (any dim), ascending.
    ::llvm::SmallVector<int64_t> getSplitAxes() const;
    /// The pending reduction on mesh axis `axis`, if the tensor is partial there.
    std::optional<ReductionKind> getPartialKind(int64_t axis) const;
    bool isPartial() const { return !getPartialAxes().empty(); }
    /// (axis, kind) pairs, ascending by axis.
    ::llvm::SmallVector<std::pair<int64_t, ReductionKind>> getPartials() const;
    /// This distribution with `axes` no longer partial.
    TensorDistAttr dropPartial(::llvm::ArrayRef<int64_t> axes) const;
    /// Whether this is `dropPartial(axes)` of `other`, without creating it.
    bool isDropPartialOf(TensorDistAttr other,
                         ::llvm::ArrayRef<int64_t> axes) const;
    /// This distribution with `axes` partial with `kind` (replacing any kind).
    TensorDistAttr addPartial(::llvm::ArrayRef<int64_t> axes,
                              ReductionKind kind) const;
    /// This distribution with another dims mapping.
    TensorDistAttr withDimsMapping(::llvm::ArrayRef<int64_t> dimsMapping) const;
  }];
}

def Dist_FutureType : Dist_Type<"Future", "future"> {
  let summary = "The pending result of an asynchronous collective";
  let description = [{
    A collective issued on a communication stream returns a future of its
    result tensor; `dist.wait` is the completion point that yields the
    tensor. Since a future is not a tensor, no op can read the result before
    the wait: the type system rules out what Paddle's stream tags could not.

    ```mlir
    %f = dist.allreduce %x on #mesh axes = [1] reduce = sum stream = mp
        : tensor<8x64xf32> -> !dist.future<tensor<8x64xf32>>
    ...
    %r = dist.wait %f : !dist.future<tensor<8x64xf32>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$valueType);
  let assemblyFormat = "`<` $valueType `>`";
}

#endif // DIST_DIALECT_DIST_IR_DISTATTRS_TD
