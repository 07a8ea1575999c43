"""Parsing the einc.signature reflection entry."""
import json

import pytest

from einc.runtime import RunError
from einc.runtime.signature import signature_from_reflection


def reflection(**changes):
    doc = {"version": 2, "inputs": [{"name": "A", "dtype": "float32", "dims": [4, None, "N"]},
                                   {"name": "x", "dtype": "float64", "dims": []},
                                   {"name": "T", "dtype": "int64", "dims": "*"}],
           "outputs": [{"name": "C", "dtype": "bool"}],
           "prints": {"0": [{"text": "hi\n"}]}, "source": "p.ein"}
    doc.update(changes)
    return {"einc.signature": json.dumps(doc), "einc.target": "llvm-cpu"}


def test_parses_dims_prints_and_target():
    signature = signature_from_reflection(reflection(), "m.vmfb")
    a, x, t = signature.inputs
    assert (a.dims, a.describe()) == ([4, None, "N"], "float32[4, ?, N]")
    assert x.is_scalar and x.describe() == "float64 scalar"
    assert t.dims is None and t.describe() == "int64[*]"
    assert signature.prints == {0: [{"text": "hi\n"}]}
    assert (signature.target, signature.source, signature.outputs[0].dtype) == ("llvm-cpu", "p.ein", "bool")


def test_missing_signature_means_not_an_einc_module():
    with pytest.raises(RunError, match="^m.vmfb is not an einc module"):
        signature_from_reflection({"iree.abi.declaration": "sync func @main()"}, "m.vmfb")


@pytest.mark.parametrize("changes, message", [
    ({"version": 1}, "signature version 1"),
    ({"outputs": [{"name": "C", "dtype": "complex64"}]}, "malformed einc.signature .*complex64"),
    ({"inputs": [{"name": "A", "dtype": "float32", "dims": "all"}]}, "malformed einc.signature"),
    ({"inputs": [{"dtype": "float32", "dims": []}]}, "malformed einc.signature"),
])
def test_bad_signatures_are_run_errors(changes, message):
    with pytest.raises(RunError, match=message):
        signature_from_reflection(reflection(**changes), "m.vmfb")


def test_invalid_json_is_a_run_error():
    with pytest.raises(RunError, match="malformed"):
        signature_from_reflection({"einc.signature": "{nope"}, "m.vmfb")
