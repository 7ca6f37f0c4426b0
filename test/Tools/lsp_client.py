#!/usr/bin/env python3
"""An editor's view of dist-lsp-server: standard LSP framing (Content-Length
headers), as VS Code's client speaks it, not the -lit-test format.

  lsp_client.py DIST_LSP_SERVER

Opens a program whose gradient sync is incomplete, waits for the published
diagnostics, fixes it with a full-text change, hovers over an encoding,
then shuts the server down; a second server is left by a client that just
closes the pipe. Prints what it saw; exits 1 on a timeout or a server that
does not exit.
"""
import json
import subprocess
import sys
import threading

BAD = """#mesh = #dist.mesh<shape = [2], names = ["dp"]>
func.func @step(%w: tensor<4xf32> {dist.param = "w"}, %g: tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>) -> (tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> {dist.grad = "w"}) {
  return %g : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>
}
"""
GOOD = BAD.replace(
    """-> (tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> {dist.grad = "w"}) {
  return %g : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>>""",
    """-> (tensor<4xf32, #dist.tensor<#mesh, [-1]>> {dist.grad = "w"}) {
  %r = dist.allreduce %g on #mesh axes = [0] reduce = sum : tensor<4xf32, #dist.tensor<#mesh, [-1], partial = [0 : sum]>> -> tensor<4xf32, #dist.tensor<#mesh, [-1]>>
  return %r : tensor<4xf32, #dist.tensor<#mesh, [-1]>>""",
)


class Client:
    def __init__(self, server):
        self.proc = subprocess.Popen(
            [server], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.next_id = 0

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id)

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def read(self):
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("the server closed its output")
            line = line.strip()
            if not line:
                break
            key, _, value = line.decode().partition(":")
            if key.lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def wait(self, predicate):
        while True:
            message = self.read()
            if predicate(message):
                return message


def with_timeout(seconds, fn):
    result = {}

    def run():
        try:
            result["value"] = fn()
        except Exception as e:  # reported below
            result["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        print("FAILED: timed out")
        sys.exit(1)
    if "error" in result:
        print(f"FAILED: {result['error']!r}")
        sys.exit(1)
    return result["value"]


def session(server):
    c = Client(server)
    init = c.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    info = init["result"]["serverInfo"]
    print(f"server: {info['name']} {info['version']}")
    c.notify("initialized", {})
    uri = "file:///work/step.mlir"
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "mlir", "version": 1, "text": BAD}},
    )
    diags = c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    for d in diags["params"]["diagnostics"]:
        r = d["range"]["start"]
        print(
            f"v{diags['params']['version']} {d['source']} {r['line']}:{r['character']}: {d['message']}"
        )
    c.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": GOOD}]},
    )
    diags = c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    print(f"v{diags['params']['version']}: {len(diags['params']['diagnostics'])} diagnostics")
    hover = c.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 80}},
    )
    print("hover: " + hover["result"]["contents"]["value"].splitlines()[0])
    c.request("shutdown", None)
    c.notify("exit", None)
    print(f"exit code: {c.proc.wait(timeout=10)}")
    # A client that goes away without a word: the server stops too.
    c = Client(server)
    c.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    c.proc.stdin.close()
    c.proc.wait(timeout=10)
    print("stopped when the client left")


if __name__ == "__main__":
    with_timeout(60, lambda: session(sys.argv[1]))
