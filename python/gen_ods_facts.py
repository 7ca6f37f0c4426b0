#!/usr/bin/env python3
"""Writes dist/_ods.py, the dialect's op and enum facts for the Python
builder, from `llvm-tblgen --dump-json` of its ODS definitions, so that the
builder never restates them (which operands, attributes and results an op
has, in order; each enum's spellings and values).

  gen_ods_facts.py OPS.json OUT.py

Run by the build (python/CMakeLists.txt) whenever a .td file changes.
"""
import json
import pprint
import sys


def superclasses(records, name):
    return records[name]["!superclasses"] if name in records else []


def arguments(records, op):
    """(operands, attributes, optional attributes) of `op`, in ODS order."""
    operands, attributes, optional = [], [], []
    for constraint, name in op["arguments"]["args"]:
        supers = superclasses(records, constraint["def"])
        if "Attr" in supers or "AttrConstraint" in supers:
            attributes.append(name)
            if (
                constraint["def"] == "UnitAttr"
                or "OptionalAttr" in supers
                or "DefaultValuedAttr" in supers
                or "DefaultValuedOptionalAttr" in supers
            ):
                optional.append(name)
        else:
            operands.append(name)
    return operands, attributes, optional


def facts(records):
    dialects = {name: records[name]["name"] for name in records["!instanceof"]["Dialect"]}
    ops = {}
    for name in records["!instanceof"]["Op"]:
        op = records[name]
        dialect = dialects.get(op["opDialect"]["def"])
        if dialect != "dist":
            continue
        operands, attributes, optional = arguments(records, op)
        ops[f"dist.{op['opName']}"] = {
            "operands": tuple(operands),
            "attributes": tuple(attributes),
            "optional_attributes": tuple(optional),
            "results": tuple(name for _, name in op["results"]["args"]),
        }
    enums = {}
    for name in records["!instanceof"].get("EnumAttrInfo", []):
        info = records[name]
        if info.get("cppNamespace") != "::mlir::dist":
            continue
        cases = [records[case["def"]] for case in info["enumerants"]]
        enums[info["className"]] = {case["str"]: case["value"] for case in cases}
    return dict(sorted(ops.items())), dict(sorted(enums.items()))


def main():
    source, output = sys.argv[1:3]
    with open(source) as f:
        records = json.load(f)
    ops, enums = facts(records)
    text = (
        '"""The dist dialect\'s op and enum facts, from its ODS definitions\n'
        "(include/dist/Dialect/Dist/IR/*.td) by python/gen_ods_facts.py at build\n"
        'time: do not edit."""\n\n'
        "# {enum class: {IR spelling: value}}\n"
        f"ENUMS = {pprint.pformat(enums, sort_dicts=False)}\n\n"
        "# {op name: {'operands', 'attributes', 'optional_attributes', 'results'}},\n"
        "# each a tuple of ODS names in ODS order.\n"
        f"OPS = {pprint.pformat(ops, sort_dicts=False)}\n"
    )
    with open(output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
