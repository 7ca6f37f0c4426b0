//===- DistBase.td - dist dialect, enums and interfaces ----*- tablegen -*-===//
//
// The dist dialect: auto-parallel distributed-training programs.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_DISTBASE_TD
#define DIST_DIALECT_DIST_IR_DISTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::mlir::dist";
  let summary = "Auto-parallel distributed-training programs";
  let description = [{
    The `dist` dialect describes SPMD training programs that are annotated for
    a process mesh, and the collectives and sharded compute ops that the
    auto-parallel rewrites produce.

    * A `func.func` is run by every process of a mesh; tensor types hold the
      *local* (per-process) shape.
    * A process mesh is a `#dist.mesh` attribute.
    * The distribution of a tensor (which mesh axis splits each dimension, and
      on which axes the value is a partial result) is the *encoding* of its
      ranked tensor type: `tensor<8x1024xf32, #dist.tensor<#mesh, [0, -1]>>`.
      A tensor without an encoding is replicated or unannotated.
    * Collectives name the mesh and the mesh axes they communicate over; the
      process group is the set of processes whose coordinates differ only
      along those axes.
    * Rank-dependent values come from `dist.process_coord`, which
      `--dist-specialize-rank` folds to constants for one process.

    The passes share conventions written as dialect attributes, which the
    dialect verifies (kind, and what they may be attached to):

    | attribute | on | meaning |
    |---|---|---|
    | `dist.param = "w"` | function argument; result of the startup function | the parameter `w` |
    | `dist.startup` (unit) | function | the parameter initialisation function |
    | `dist.grad = "w"` | function result | the gradient of parameter `w` |
    | `dist.state = "w"` | function argument or result | an optimizer state of parameter `w` (in the order the update takes them) |
    | `dist.loss_scale` (unit) | function argument | the AMP loss scale |
    | `dist.found_inf` (unit) | function result | AMP: a gradient was not finite somewhere |
    | `dist.recompute` (unit) | any op | a recomputed forward op |
    | `dist.loss` (unit) | function result | the step's loss, a mean over its batch (`--dist-pipeline` averages it over microbatches) |
    | `dist.stage = k` (integer) | any op | the pipeline stage of the op (`--dist-pipeline`) |
  }];
  // materializeConstant builds arith.constant; the upstream ops whose rules
  // dist promises (DistRuleModels.cpp) are arith's and tensor's.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  // The markers below are dialect attributes: the dialect checks their kind
  // and what they are attached to.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();

    /// The checks that succeeded, by op signature (SignatureCache.h).
    ::mlir::dist::SignatureCache &getSignatureCache() {
      return *signatureCache;
    }

  private:
    std::unique_ptr<::mlir::dist::SignatureCache> signatureCache;

  public:

    /// `{dist.param = "w"}` on a function argument: the parameter `w`. On a
    /// result of the `dist.startup` function: `w` initialised.
    static constexpr ::llvm::StringLiteral kParamAttrName = "dist.param";
    /// `dist.startup` (unit) on a function: the parameter initialisation
    /// function (Paddle's startup program).
    static constexpr ::llvm::StringLiteral kStartupAttrName = "dist.startup";
    /// `dist.complete` (unit) on a function: its unencoded ranked tensors
    /// are undecided, not replicated; --dist-complete decides them.
    static constexpr ::llvm::StringLiteral kCompleteAttrName =
        "dist.complete";
    /// `dist.recompute` (unit) on any op: a recomputed forward op.
    static constexpr ::llvm::StringLiteral kRecomputeAttrName =
        "dist.recompute";
    /// `{dist.grad = "w"}` on a function result: the gradient of `w`.
    static constexpr ::llvm::StringLiteral kGradAttrName = "dist.grad";
    /// `{dist.state = "w"}` on a function argument or result: an optimizer
    /// state (a momentum, a moment) of parameter `w`.
    static constexpr ::llvm::StringLiteral kStateAttrName = "dist.state";
    /// `{dist.loss_scale}` (unit) on a function argument: the AMP loss scale.
    static constexpr ::llvm::StringLiteral kLossScaleAttrName =
        "dist.loss_scale";
    /// `{dist.found_inf}` (unit) on a function result: whether a gradient
    /// was not finite on any process.
    static constexpr ::llvm::StringLiteral kFoundInfAttrName =
        "dist.found_inf";
    /// `{dist.loss}` (unit) on a function result: the step's loss, a mean
    /// over the batch.
    static constexpr ::llvm::StringLiteral kLossAttrName = "dist.loss";
    /// `dist.stage = k` (integer) on an op: its pipeline stage.
    static constexpr ::llvm::StringLiteral kStageAttrName = "dist.stage";
  }];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Dist_ReductionKind : I32EnumAttr<"ReductionKind",
    "reduction applied by a collective or pending on a partial tensor", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">,
      I32EnumAttrCase<"Prod", 3, "prod">,
      I32EnumAttrCase<"Avg", 4, "avg">
    ]> {
  let cppNamespace = "::mlir::dist";
}

def Dist_StreamKind : I32EnumAttr<"StreamKind",
    "execution stream a collective is issued on", [
      I32EnumAttrCase<"Compute", 0, "compute">,
      I32EnumAttrCase<"ModelParallel", 1, "mp">,
      I32EnumAttrCase<"DataParallel", 2, "dp">,
      I32EnumAttrCase<"Sharding", 3, "sharding">
    ]> {
  let cppNamespace = "::mlir::dist";
}

class Dist_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Dist_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class Dist_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Dist_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

#endif // DIST_DIALECT_DIST_IR_DISTBASE_TD
