"""The signature of `main`: its MLIR function type and the `einc.signature` reflection JSON the
runner reads back from the .vmfb (format in einc/runtime/signature.py)."""
from __future__ import annotations

import json

from iree.compiler import ir

from einc.ir.nodes import Input, Print, Program
from einc.ir.types import Lin, Quotient, Sym
from einc.mlir.types import element_type, tensor_type
from einc.passes.size_facts import ExtentFact, IndexFact

SIGNATURE_VERSION = 2


def argument_type(inp: Input) -> ir.Type:
    """Scalars are plain arguments; tensors are ranked, dynamic where the size is not constant."""
    if inp.rank == 0:
        return element_type(inp.dtype)
    return tensor_type(inp.dtype, inp.shape)


def function_type(program: Program) -> ir.FunctionType:
    """The outputs, then the status vector of each index check (passes.index_checks)."""
    results = [tensor_type(v.dtype, v.shape) for _, v in program.outputs]
    results += [tensor_type(c.status.dtype, c.status.shape) for c in program.index_checks]
    return ir.FunctionType.get([argument_type(i) for i in program.inputs], results)


def reflection(program: Program, target: str) -> ir.Attribute:
    """iree.reflection keeps string values only, so the signature travels as one JSON string."""
    prints, asserts, assert_values = [], {}, {}
    for effect in program.effects:       # prints before each assert, so a failed one cuts there
        if isinstance(effect, Print):
            prints.append(effect)
            continue
        asserts.setdefault(effect.message, len(prints))
        if effect.values is not None:    # traced in the same order (mlir.effects)
            assert_values.setdefault(effect.message, len(prints))
            prints.append(effect.values)
    doc = {
        "version": SIGNATURE_VERSION,
        "target": target,
        "source": program.source,
        "inputs": [{"name": i.name, "dtype": i.dtype.numpy.name, "dims": _dims(i)} for i in program.inputs],
        "outputs": [{"name": name, "dtype": v.dtype.numpy.name, "rank": v.rank} for name, v in program.outputs],
        "prints": {str(n): p.parts for n, p in enumerate(prints)},
        "asserts": asserts,
        "assert_values": assert_values,
        "fixed_dims": dict(program.fixed_dims),
        "sizes": {sym.name: {"input": program.inputs[sym.input_pos].name, "axis": sym.axis}
                  for sym in program.syms},
        "size_checks": [_size_check(fact) for fact in program.size_facts],
        "index_checks": [_index_check(check) for check in program.index_checks],
    }
    return ir.DictAttr.get({"einc.signature": ir.StringAttr.get(json.dumps(doc))})


def _index_check(check) -> dict:
    """What the runner says when the check's status reports a bad index (einc/runtime/index_checks.py)."""
    return {"text": check.text, "array": check.array, "axis": check.axis, "rank": check.rank,
            "at": str(check.span) if check.span is not None else None, "vars": [v.name for v in check.vars]}


def _dims(inp: Input):
    return "*" if inp.declared_dims is None else list(inp.declared_dims)


def _size_check(fact: ExtentFact | IndexFact) -> dict:
    """A fact of passes.size_facts in the runner's terms (einc/runtime/sizes.py reads it)."""
    at = str(fact.span) if fact.span is not None else None
    if isinstance(fact, ExtentFact):
        return {"kind": "extent", "var": fact.var, "extent": _lin(fact.extent), "at": at}
    return {"kind": "index", "access": fact.access, "array": fact.array, "axis": fact.axis,
            "size": _lin(fact.size), "first": _lin(fact.first), "last": _lin(fact.last),
            "when": [_lin(w) for w in fact.when], "at": at}


def _lin(lin: Lin) -> dict:
    """{"text", "const", "terms": [[coeff, dim name | {"floor": lin, "by": k}]]}."""
    return {"text": repr(lin), "const": lin.const,
            "terms": [[coeff, _size_key(key)] for key, coeff in lin.terms.items()]}


def _size_key(key: Sym | Quotient):
    if isinstance(key, Quotient):
        return {"floor": _lin(key.numer), "by": key.denom}
    return key.name
