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

#endif // DIST_DIALECT_DIST_IR_DISTINTERFACES_TD
