"""The signature of `main`: its MLIR function type and its iree.reflection, which the runner reads
back from the .vmfb: the `einc.signature` JSON (format in einc/runtime/signature.py), the target
and, for code tuned to this CPU, the CPU's extensions (einc.module_file has the keys)."""
from __future__ import annotations

import json

from iree.compiler import ir
from iree.compiler.dialects import func

from einc import host_cpu
from einc.ir.nodes import Input, Print, Program
from einc.ir.types import Lin, Quotient, SizeOp, Sym
from einc.mlir.core.dispatch_captures import RESHAPES
from einc.mlir.core.types import element_type, tensor_type
from einc.module_file import (CPU_FEATURES_KEY, INPUT_ALIGNMENT_KEY, PARAMETERS_KEY, READ_ONCE_KEY, SIGNATURE_KEY,
                              SIGNATURE_VERSION, TARGET_KEY)
from einc.passes.size_facts import ExtentFact, IndexFact
from einc.target import Target


def argument_type(inp: Input) -> ir.Type:
    """Scalars are plain arguments, but for f16 and bf16, which the VM cannot pass: 0-d tensors
    (einc.mlir reads their element); tensors are ranked, dynamic where the size is not constant."""
    if inp.rank == 0 and not inp.dtype.is_half:
        return element_type(inp.dtype)
    return tensor_type(inp.dtype, inp.shape)


def function_type(program: Program) -> ir.FunctionType:
    """The outputs, then the status vector of each index check (passes.index_checks)."""
    results = [tensor_type(v.dtype, v.shape) for _, v in program.outputs]
    results += [tensor_type(c.status.dtype, c.status.shape) for c in program.index_checks]
    return ir.FunctionType.get([argument_type(i) for i in program.inputs], results)


def reflection(program: Program, target: Target) -> ir.Attribute:
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
        "source": program.source,
        "inputs": [{"name": i.name, "dtype": i.dtype.numpy.name, "dims": _dims(i)} for i in program.inputs],
        "outputs": [{"name": name, "dtype": v.dtype.numpy.name, "rank": v.rank} for name, v in program.outputs],
        "prints": {str(n): p.parts for n, p in enumerate(prints)},
        "asserts": asserts,
        "assert_values": assert_values,
        "fixed_dims": dict(program.fixed_dims),
        "sizes": {sym.name: {"input": program.inputs[sym.input_pos].name, "axis": sym.axis}
                  for sym in program.syms},
        "size_checks": [size_check(fact) for fact in program.size_facts],
        "index_checks": [_index_check(check) for check in program.index_checks],
    }
    entries = {SIGNATURE_KEY: json.dumps(doc), **target_entries(target)}
    return ir.DictAttr.get({key: ir.StringAttr.get(value) for key, value in entries.items()})


def target_entries(target: Target) -> dict[str, str]:
    """The reflection entries that say what the module's code needs to run: the target, and for
    code tuned to this CPU its instruction set extensions (the runner refuses a CPU lacking one)."""
    entries = {TARGET_KEY: target.name}
    if target.tuned_to_host:
        entries[CPU_FEATURES_KEY] = " ".join(host_cpu.isa_features())
    return entries


def record_input_alignment(main: func.FuncOp, alignment: int) -> None:
    """Add to `main`'s reflection the alignment its module's kernels were built to assume of an
    input (einc.mlir `resource_config`): the runner lends inputs that start on it in place. A
    module without the entry (hand-written MLIR, an earlier einc) gets IREE's default."""
    _add_reflection_entry(main, INPUT_ALIGNMENT_KEY, str(alignment))


# Ops in `main`'s own block that read each element of an input once (a pack copies it into tiles)
# or only its sizes; reshapes pass it on to their own uses.
_READING_ONCE = ("linalg.pack", "tensor.dim")


def record_read_once_inputs(main: func.FuncOp, program: Program) -> None:
    """Add to `main`'s reflection the inputs that every kernel reads once, element by element: the
    runner lends such an input off a cache line rather than copying it onto one (a copy costs a
    pass over it; a kernel reading it once gains nothing from the copy). An input read inside a
    loop, or by any other op, is left out (an LSTM's weights, read every step, ran 16% slower lent
    off the line)."""
    entry = main.entry_block
    names = [inp.name for inp, argument in zip(program.inputs, entry.arguments)
             if _read_once(argument, entry)]
    _add_reflection_entry(main, READ_ONCE_KEY, " ".join(names))


def _read_once(value: ir.Value, entry: ir.Block) -> bool:
    """Whether each use of `value` is in `entry` and reads it once, directly or through reshapes."""
    for use in value.uses:
        op = use.owner.operation
        if op.block != entry or op.name not in _READING_ONCE and op.name not in RESHAPES:
            return False
        if op.name in RESHAPES and not _read_once(op.results[0], entry):
            return False
    return True


def record_parameters(module: ir.Module, digest: str) -> None:
    """Add the digest of the module's weights archive (einc.backend.parameters) to `main`'s
    reflection: the runner refuses an archive of another build."""
    main = next(op for op in module.body.operations if op.operation.name == "func.func"
                and ir.StringAttr(op.attributes["sym_name"]).value == "main")
    with module.context:
        _add_reflection_entry(main, PARAMETERS_KEY, digest)


def _add_reflection_entry(main, key: str, value: str) -> None:
    """Set one string entry of `main`'s iree.reflection, keeping the others."""
    entries = {a.name: a.attr for a in ir.DictAttr(main.attributes["iree.reflection"])}
    entries[key] = ir.StringAttr.get(value)
    main.attributes["iree.reflection"] = ir.DictAttr.get(entries)


def _index_check(check) -> dict:
    """What the runner says when the check's status reports a bad index (einc/runtime/index_checks.py)."""
    return {"kind": check.kind, "text": check.text, "array": check.array, "axis": check.axis, "rank": check.rank,
            "at": str(check.span) if check.span is not None else None, "vars": [v.name for v in check.vars]}


def _dims(inp: Input):
    return "*" if inp.declared_dims is None else list(inp.declared_dims)


def size_check(fact: ExtentFact | IndexFact) -> dict:
    """A fact of passes.size_facts in the runner's terms (einc/runtime/sizes.py reads it)."""
    at = str(fact.span) if fact.span is not None else None
    if isinstance(fact, ExtentFact):
        return {"kind": "extent", "var": fact.var, "extent": _lin(fact.extent), "at": at}
    return {"kind": "index", "access": fact.access, "array": fact.array, "axis": fact.axis,
            "size": _lin(fact.size), "first": _lin(fact.first), "last": _lin(fact.last),
            "when": [_lin(w) for w in fact.when], "at": at}


def _lin(lin: Lin) -> dict:
    """{"text", "const", "terms": [[coeff, dim name | {"floor": lin, "by": k} | {"mul" | "min" |
    "max": [lin, ..]}]]}."""
    return {"text": repr(lin), "const": lin.const,
            "terms": [[coeff, _size_key(key)] for key, coeff in lin.terms.items()]}


def _size_key(key: Sym | Quotient | SizeOp):
    if isinstance(key, Quotient):
        return {"floor": _lin(key.numer), "by": key.denom}
    if isinstance(key, SizeOp):
        return {key.op: [_lin(a) for a in key.args]}
    return key.name
