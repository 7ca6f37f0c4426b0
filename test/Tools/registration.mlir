// A tool that inserts only dist::DistDialect into its registry lacks the
// rules of upstream ops (external models). The rules are promised
// interfaces, so the check says which registration call is missing instead
// of calling a well-defined op one without a rule.
// RUN: not dist-bare-opt %s --dist-verify-distributions 2>&1 | FileCheck %s --check-prefix=BARE
// BARE: error: 'tensor.collapse_shape' op has a distribution rule that this tool did not register (an external model of dist): build the tool's DialectRegistry with mlir::dist::registerAllDistDialects(registry) from "dist/InitAllDist.h" (C: mlirDistRegisterDialects), not with registry.insert<dist::DistDialect>() alone
// BARE-NOT: has no distribution rule
// A tool that registers it all checks the program.
// RUN: dist-opt %s --dist-verify-distributions | FileCheck %s --check-prefix=FULL
// FULL: tensor.collapse_shape

#mesh = #dist.mesh<shape = [2]>
func.func @collapse(%x: tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>>) -> tensor<32xf32, #dist.tensor<#mesh, [0]>> {
  %y = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32, #dist.tensor<#mesh, [0, -1]>> into tensor<32xf32, #dist.tensor<#mesh, [0]>>
  return %y : tensor<32xf32, #dist.tensor<#mesh, [0]>>
}
