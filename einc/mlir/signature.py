"""The signature of `main`: its MLIR function type and the `einc.signature` reflection JSON the
runner reads back from the .vmfb (format in einc/runtime/signature.py)."""
from __future__ import annotations

import json

from iree.compiler import ir

from einc.ir.nodes import Input, Print, Program
from einc.mlir.types import element_type, tensor_type

SIGNATURE_VERSION = 1


def argument_type(inp: Input) -> ir.Type:
    """Scalars are plain arguments; tensors are ranked, dynamic where the size is not constant."""
    if inp.rank == 0:
        return element_type(inp.dtype)
    return tensor_type(inp.dtype, inp.shape)


def function_type(program: Program) -> ir.FunctionType:
    results = [tensor_type(v.dtype, v.shape) for _, v in program.outputs]
    return ir.FunctionType.get([argument_type(i) for i in program.inputs], results)


def reflection(program: Program, target: str) -> ir.Attribute:
    """iree.reflection keeps string values only, so the signature travels as one JSON string."""
    prints = [e for e in program.effects if isinstance(e, Print)]
    asserts, printed = {}, 0
    for effect in program.effects:       # prints before each assert, so a failed one cuts there
        if isinstance(effect, Print):
            printed += 1
        else:
            asserts.setdefault(effect.message, printed)
    doc = {
        "version": SIGNATURE_VERSION,
        "target": target,
        "source": program.source,
        "inputs": [{"name": i.name, "dtype": i.dtype.numpy.name, "dims": _dims(i)} for i in program.inputs],
        "outputs": [{"name": name, "dtype": v.dtype.numpy.name, "rank": v.rank} for name, v in program.outputs],
        "prints": {str(n): p.parts for n, p in enumerate(prints)},
        "asserts": asserts,
    }
    return ir.DictAttr.get({"einc.signature": ir.StringAttr.get(json.dumps(doc))})


def _dims(inp: Input):
    return "*" if inp.declared_dims is None else list(inp.declared_dims)
