"""The type stubs of dist._dist declare what the module has, and the
package says its version."""
import ast
import os
import re

import dist
import dist._dist as native


def stub_tree():
    path = os.path.join(os.path.dirname(dist.__file__), "_dist.pyi")
    with open(path) as f:
        return ast.parse(f.read())


def test_stubs_declare_every_public_name_and_no_other():
    tree = stub_tree()
    declared = {
        node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))
    }
    actual = {name for name in dir(native) if not name.startswith("__")}
    assert declared == actual


def test_stubs_declare_every_member_of_each_class():
    for node in stub_tree().body:
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(native, node.name)
        declared = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
        actual = {m for m in vars(cls) if not m.startswith("_")}
        assert actual <= declared, (node.name, actual - declared)


def test_version_and_typed_marker():
    assert re.fullmatch(r"\d+\.\d+\.\d+", dist.__version__)
    assert os.path.exists(os.path.join(os.path.dirname(dist.__file__), "py.typed"))
