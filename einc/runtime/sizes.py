"""Checking the signature's `size_checks` against the sizes of a run's inputs, before the call.

The compiler lists what every run needs of its sizes (einc/passes/size_facts.py): each extent
is >= 0, and each access that runs at all stays inside its axis. Sizes come as linear forms
over the run-time dims, `{"text", "const", "terms": [[coeff, dim | {"floor": form, "by": k} |
{"mul" | "min" | "max": [form, ..]}]]}`.
A run that breaks one fails with one line naming the dims, the inputs they come from and the
place in the source, instead of an allocation of absurd size or a read outside a buffer.
"""
from __future__ import annotations

import math
from typing import Mapping

from einc.runtime.errors import RunError
from einc.runtime.signature import Signature


def check_sizes(signature: Signature, shapes: Mapping[str, tuple[int, ...]]) -> None:
    """Raise RunError for the first size check the inputs' `shapes` (by input name) break."""
    if not signature.size_checks:
        return
    try:
        dims = _dims(signature, shapes)
        problems = ((check, _EXPLAIN[check["kind"]](check, dims)) for check in signature.size_checks)
        check, problem = next(((c, p) for c, p in problems if p is not None), (None, None))
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as err:
        raise RunError(f"{signature.source or 'the module'} has malformed size checks ({err!r})") from None
    if problem is not None:
        raise RunError(f"{_dims_text(signature, dims, check)} the program: {problem}")


def has_empty_range(signature: Signature, shapes: Mapping[str, tuple[int, ...]]) -> bool:
    """Whether the inputs' `shapes`, which pass `check_sizes`, give some range of the program
    extent 0 (a build with those sizes fixed rejects such a range, E004, as an empty one
    written into the program is a mistake)."""
    dims = _dims(signature, shapes)
    return any(check["kind"] == "extent" and _value(check["extent"], dims) == 0 for check in signature.size_checks)


def _dims(signature: Signature, shapes: Mapping[str, tuple[int, ...]]) -> dict[str, int]:
    return {name: shapes[input_name][axis] for name, (input_name, axis) in signature.sizes.items()}


def _extent(check: dict, dims: dict[str, int]) -> str | None:
    extent = _value(check["extent"], dims)
    if extent >= 0:
        return None
    return f"the range of `{check['var']}`{_at(check)} would have extent {_shown(check['extent'], extent)}"


def _index(check: dict, dims: dict[str, int]) -> str | None:
    if any(_value(w, dims) < 1 for w in check["when"]):
        return None                                   # the access never runs
    first, last, size = (_value(check[k], dims) for k in ("first", "last", "size"))
    if 0 <= first and last < size:
        return None
    where = f"index {_shown(check['first'], first)}" if check["first"] == check["last"] else \
        f"indices {_shown(check['first'], first)} to {_shown(check['last'], last)}"
    return (f"the {check['access']} of {check['array']}{_at(check)} needs {where} of its axis "
            f"{check['axis']}, which has size {_shown(check['size'], size)}")


_EXPLAIN = {"extent": _extent, "index": _index}


def _value(form: dict, dims: dict[str, int]) -> int:
    total = form["const"]
    for coeff, key in form["terms"]:
        if isinstance(key, str):
            total += coeff * dims[key]
        elif "floor" in key:
            total += coeff * (_value(key["floor"], dims) // key["by"])
        else:
            [(op, args)] = key.items()
            total += coeff * _SIZE_OPS[op]([_value(a, dims) for a in args])
    return total


_SIZE_OPS = {"mul": math.prod, "min": min, "max": max}


def _shown(form: dict, value: int) -> str:
    return str(value) if not form["terms"] else f"{form['text']} = {value}"


def _at(check: dict) -> str:
    return f" at {check['at']}" if check.get("at") else ""


def _dims_text(signature: Signature, dims: dict[str, int], check: dict) -> str:
    """`input sizes H = 1 (X axis 2), KH = 3 (K axis 2) do not fit` for the dims `check` mentions."""
    names = [name for name in dims if name in _mentioned(check)]
    shown = [f"{name} = {dims[name]} ({signature.sizes[name][0]} axis {signature.sizes[name][1]})" for name in names]
    if len(shown) == 1:
        return f"input size {shown[0]} does not fit"
    return f"input sizes {', '.join(shown)} do not fit" if shown else "the input sizes do not fit"


def _mentioned(check: dict) -> set[str]:
    names: set[str] = set()
    forms = [v for v in check.values() if isinstance(v, dict)] + list(check.get("when", []))
    while forms:
        form = forms.pop()
        for _, key in form["terms"]:
            if isinstance(key, str):
                names.add(key)
            elif "floor" in key:
                forms.append(key["floor"])
            else:
                forms.extend(*key.values())
    return names
