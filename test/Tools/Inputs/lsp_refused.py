"""Prints a dist-lsp-server -lit-test session (for lsp-refused.test) that
opens documents the server would crash on: one MLIR 22's linalg.transpose
parser crashes on, one an edit makes crash, and documents nested 20,000 and
3,000 levels deep (deeper than the parser's stack allows)."""
import json


def message(method, params, id=None):
    body = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        body["id"] = id
    print(json.dumps(body))
    print("// -----")


def open_document(uri, text, version=1):
    message(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": uri,
                "languageId": "mlir",
                "version": version,
                "text": text,
            }
        },
    )


TRANSPOSE = (
    "func.func @t(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {\n"
    "  %0 = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = 5\n"
    "  return %0 : tensor<3x2xf32>\n"
    "}\n"
)
# MLIR 22's tensor.expand_shape verifier crashes on an empty group.
EXPAND = (
    "func.func @e(%x: tensor<4x8xf32>) -> tensor<4x2x4xf32> {\n"
    "  %e = tensor.expand_shape %x [[], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>\n"
    "  return %e : tensor<4x2x4xf32>\n"
    "}\n"
)
FINE = "func.func @f(%a: tensor<2xf32>, %b: tensor<2x3xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n"


def nested(n):
    return "func.func @f() attributes {x = " + "[" * n + "]" * n + "} { return }\n"


message(
    "initialize",
    {"processId": 123, "rootUri": "dist", "capabilities": {}, "trace": "off"},
    id=0,
)
open_document("test:///transpose.mlir", TRANSPOSE)
message(
    "textDocument/hover",
    {"textDocument": {"uri": "test:///transpose.mlir"}, "position": {"line": 1, "character": 9}},
    id=1,
)
open_document("test:///edited.mlir", FINE)
# An edit (a range, as editors send them) that makes the document crash the
# parser: the return becomes a linalg.broadcast with a malformed list.
message(
    "textDocument/didChange",
    {
        "textDocument": {"uri": "test:///edited.mlir", "version": 2},
        "contentChanges": [
            {
                "range": {
                    "start": {"line": 1, "character": 2},
                    "end": {"line": 1, "character": 26},
                },
                "text": '%0 = linalg.broadcast ins(%a : tensor<2xf32>) outs(%b : tensor<2x3xf32>) dimensions = "a"\n  return %a : tensor<2xf32>',
            }
        ],
    },
)
# And one that mends it again.
message(
    "textDocument/didChange",
    {
        "textDocument": {"uri": "test:///edited.mlir", "version": 3},
        "contentChanges": [{"text": FINE}],
    },
)
open_document("test:///verifier.mlir", EXPAND)
open_document("test:///deep.mlir", nested(20000))
open_document("test:///deeper-than-stack.mlir", nested(3000))
message("shutdown", None, id=2)
print('{"jsonrpc":"2.0","method":"exit"}')
