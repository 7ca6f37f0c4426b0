// A program that is run needs a callable entry: with require-entry (as
// dist-run and dist-compile lower) anything else is an error naming it.
// RUN: not dist-opt %s --convert-dist-to-mpi="require-entry=true entry=nosuch" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not dist-opt %s --convert-dist-to-mpi="require-entry=true entry=decl" 2>&1 | FileCheck %s --check-prefix=DECL
// RUN: not dist-opt %s --convert-dist-to-mpi="require-entry=true entry=takes" 2>&1 | FileCheck %s --check-prefix=TAKES
// RUN: not dist-opt %s --dist-to-llvm="require-entry=true entry=gives" 2>&1 | FileCheck %s --check-prefix=GIVES
// Without it (the default) a module without the entry is a library.
// RUN: dist-opt %s --convert-dist-to-mpi="entry=nosuch" | FileCheck %s --check-prefix=LIB
// RUN: dist-opt %s --convert-dist-to-mpi="require-entry=true" | FileCheck %s --check-prefix=MAIN

// The module is not printed into a note (that is the whole program); the
// functions that could be run are named; the error is at the file's start
// (the implicit module's own location, line 0, is no place an editor shows).
// MISSING: require-entry.mlir:1:1: error: the entry function @nosuch is not in the module; functions it could run: @main
// MISSING-NOT: see current operation
// DECL: :[[# @LINE + 1]]:1: error: the entry function @decl is a declaration without a body
func.func private @decl()
// TAKES: :[[# @LINE + 1]]:1: error: the entry function @takes must take no arguments and return nothing, not '(index) -> ()'
func.func @takes(%i: index) {
  return
}
// GIVES: error: the entry function @gives must take no arguments and return nothing, not '() -> index'
func.func @gives() -> index {
  %c = arith.constant 0 : index
  return %c : index
}
// LIB-LABEL: func.func @main
// LIB-NOT: mpi.init
// MAIN-LABEL: func.func @main
// MAIN-NEXT: mpi.init
func.func @main() {
  return
}
