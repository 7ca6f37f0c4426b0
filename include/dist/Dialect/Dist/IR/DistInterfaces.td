//===- DistInterfaces.td - dist op interfaces --------------*- tablegen -*-===//

#ifndef DIST_DIALECT_DIST_IR_DISTINTERFACES_TD
#define DIST_DIALECT_DIST_IR_DISTINTERFACES_TD

include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Interfaces
//===----------------------------------------------------------------------===//

def Dist_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::mlir::dist";
  let description = [{
    An op that communicates within the process groups of a mesh: the groups
    are the sets of processes whose mesh coordinates differ only along
    `getAxes()`. Passes that schedule or lower communication (stream
    assignment, the MPI lowering) work on this interface rather than on each
    collective.
  }];
  let methods = [
    InterfaceMethod<"The mesh the collective runs on.",
      "::mlir::dist::MeshAttr", "getMesh">,
    InterfaceMethod<"The mesh axes the collective communicates over.",
      "::llvm::ArrayRef<int64_t>", "getAxes">,
    InterfaceMethod<"The tensor being communicated.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getInput">,
    InterfaceMethod<"The communicated result: a tensor, or a future of one "
      "when the collective is asynchronous.",
      "::mlir::Value", "getResult">,
    InterfaceMethod<"The stream the collective is issued on, if set.",
      "std::optional<::mlir::dist::StreamKind>", "getStream">,
  ];
  let extraClassDeclaration = [{
    /// The result tensor type, looking through a future.
    ::mlir::RankedTensorType getResultTensorType();
    /// Whether the result is a future that a dist.wait completes.
    bool isAsync() { return ::llvm::isa<FutureType>(getResult().getType()); }
  }];
}

def Dist_RedistributionOpInterface : OpInterface<"RedistributionOpInterface"> {
  let cppNamespace = "::mlir::dist";
  let description = [{
    An op that changes a tensor's distribution along the mesh axes it runs
    over and keeps it along the others: the five collectives and the two
    local views of `RedistributionKind.h`. The op's kind says what each of
    its axes may do (`allowsTransition`), what the op is called and what
    share of its bytes crosses a link; the verifiers, the reshard planner's
    steps, completion and the cost model read the kind from here, so that
    what a redistribution does is written once.
  }];
  let methods = [
    InterfaceMethod<"The mesh the op redistributes over.",
      "::mlir::dist::MeshAttr", "getMesh">,
    InterfaceMethod<"The mesh axes whose state the op changes.",
      "::llvm::ArrayRef<int64_t>", "getAxes">,
    InterfaceMethod<"The tensor being redistributed.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getInput">,
    InterfaceMethod<"Which of the seven kinds of redistribution the op is.",
      "::mlir::dist::RedistributionKind", "getRedistributionKind">,
    InterfaceMethod<"The reduction of an allreduce, a reduce-scatter or a "
      "partial view; nothing for the other kinds.",
      "std::optional<::mlir::dist::ReductionKind>", "getReduction", (ins),
      [{}], [{ return std::nullopt; }]>,
  ];
}

def Dist_DistributionRuleInterface : OpInterface<"DistributionRuleInterface"> {
  let cppNamespace = "::mlir::dist";
  let description = [{
    The op's distribution rule (Paddle's SPMD rules): given the `#dist.tensor`
    encodings of its operands (an operand without one is replicated), what
    its results hold on each process: which mesh axis splits each result
    dim, and on which axes each result is a partial value awaiting which
    reduction. When no distribution is correct (a contracted dim split two
    ways, one mesh axis splitting two dims, a nonlinear op of a partial
    value, a product of two partial values, partial kinds mixed), the rule
    says why.

    dist's compute ops implement it and check their declared result
    encodings in their verifiers; upstream ops that dist programs use on
    encoded tensors get it as an external model
    (`registerDistributionRuleModels`), and `--dist-verify-distributions`
    checks them. `include/dist/Dialect/Dist/Rules/DistRules.h` has the shared
    rule engines (contractions, elementwise ops, reshapes).
  }];
  let methods = [
    InterfaceMethod<[{
        The distribution of each result (one without a mesh for a result
        that is not a ranked tensor, or when nothing is distributed) when
        the operands and results have the types `operandTypes` and
        `resultTypes` (one per operand and one per result, each of the
        op's own rank), or failure with the reason written to `whyNot`.
        The rule reads types from these ranges only, never from the op, so
        that a client can ask "what if" without changing the IR (completion
        prices its options so, as upstream shard's `getShardingOption` takes
        shardings). `rules::Dist` rather than attributes: the verifier asks
        after every pass, and comparing needs no uniquing
        (`rules::inferResultAttrs` gives attributes).
      }],
      "::mlir::FailureOr<::llvm::SmallVector<::mlir::dist::rules::Dist>>",
      "inferResultDistributions",
      (ins "::mlir::TypeRange":$operandTypes, "::mlir::TypeRange":$resultTypes,
           "::llvm::raw_ostream &":$whyNot)>,
    InterfaceMethod<[{
        Appends what the rule reads besides the operand and result types
        (a matmul's transposes; a linalg op's body and init constants), as
        opaque words: the key under which a successful check is remembered
        (`SignatureCache.h`). By default every inherent attribute; a rule
        that reads anything else must append it, or a check that succeeded
        for one op answers for another that differs only there.
      }],
      "void", "appendRuleAttributes",
      (ins "::llvm::SmallVectorImpl<const void *> &":$key), [{}], [{
        ::mlir::dist::rules::appendInherentAttributes($_op, key);
      }]>,
  ];
  let extraClassDeclaration = [{
    /// The rule for the op as it is typed.
    ::mlir::FailureOr<::llvm::SmallVector<::mlir::dist::rules::Dist>>
    inferResultDistributions(::llvm::raw_ostream &whyNot) {
      return inferResultDistributions((*this)->getOperandTypes(),
                                      (*this)->getResultTypes(), whyNot);
    }
  }];
}

#endif // DIST_DIALECT_DIST_IR_DISTINTERFACES_TD
