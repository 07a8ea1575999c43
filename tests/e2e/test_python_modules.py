"""Python modules at build time (LANGUAGE.md, thesis 3.5): `python::math` is std::math,
`python::numpy::load` is load_npy, any other function runs during `einc build --allow-python`
and its result is embedded as a constant."""
import math

import numpy as np
import pytest

import einc
from einc.cli import _run_cli
from einc.diagnostics import CompileError

HELPERS = '''
import numpy as np

def ramp(n, scale):
    return np.arange(n, dtype=np.float32) * scale

def count_lines(path):          # relative to the program's folder
    with open(path) as f:
        return len(f.readlines())

def halves(xs):
    return [x / 2 for x in xs]

def boom(x):
    raise ValueError(f"bad value {x}")

def opaque():
    return {"a": 1}
'''

PROGRAM = """
use python::math;
use python::numpy as np;
use python::helpers;
let c = math::cos(0.0);
let p = math::pi;
let w = np::load("w.npy");
let w2 = python::numpy::load("w.npy");
let r = helpers::ramp(4, 0.5);
let lines = helpers::count_lines("data.txt");
let h = python::helpers::halves([1.0, 3.0]);
let total = sum[i](r[i] * w[i]);
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "data.txt").write_text("a\nb\nc\n")
    np.save(tmp_path / "w.npy", np.arange(4, dtype=np.float32))
    (tmp_path / "prog.ein").write_text(PROGRAM)
    return tmp_path


def test_python_functions_run_during_the_build_and_are_embedded(folder):
    art = einc.compile(folder / "prog.ein", allow_python=True)
    (folder / "helpers.py").unlink()           # the module carries the results
    out = einc.load(art.vmfb)()
    r = np.arange(4, dtype=np.float32) * 0.5
    assert out["c"] == 1.0 and out["p"] == np.float32(math.pi)
    np.testing.assert_array_equal(out["w"], np.arange(4))
    np.testing.assert_array_equal(out["w2"], np.arange(4))
    np.testing.assert_array_equal(out["r"], r)
    assert out["lines"] == 3 and out["lines"].dtype == np.int32
    np.testing.assert_array_equal(out["h"], [0.5, 1.5])
    assert out["total"] == np.float32((r * np.arange(4)).sum())


def test_without_the_flag_a_python_call_is_E011_naming_the_flag(folder):
    with pytest.raises(CompileError) as info:
        einc.compile(folder / "prog.ein")
    diag = info.value.diagnostics[0]
    assert diag.code == "E011" and diag.span.line == 9 and "--allow-python" in diag.hint


def test_math_and_numpy_load_need_no_flag(folder):
    (folder / "plain.ein").write_text('use python::math;\nlet c = python::math::sqrt(4.0) + math::e;\n'
                                      'let w = python::numpy::load("w.npy");\n')
    out = einc.load(einc.compile(folder / "plain.ein").vmfb)()
    assert out["c"] == np.float32(2.0 + math.e)


def test_the_cli_flag(folder, capsys):
    target = folder / "prog.vmfb"
    assert _run_cli(["build", str(folder / "prog.ein"), "-o", str(target)]) == 1
    assert "--allow-python" in capsys.readouterr().err and not target.exists()
    assert _run_cli(["build", str(folder / "prog.ein"), "-o", str(target), "--allow-python"]) == 0
    assert target.exists()


@pytest.mark.parametrize("call, code, words", [
    ("helpers::boom(3)", "E006", "raised ValueError: bad value 3"),
    ("helpers::opaque()", "E002", "returned dict"),
    ("helpers::halves(v)", "E011", "the run-time input `v`"),
    ("python::nosuchmodule::f(1)", "E010", "cannot import Python module `nosuchmodule`"),
    ("helpers::nosuch(1)", "E003", "has no `nosuch`"),
])
def test_python_call_errors_are_diagnostics_at_the_call(folder, call, code, words):
    (folder / "bad.ein").write_text(f"use python::helpers;\nlet v: [f32; 2];\nlet y = {call};\n")
    with pytest.raises(CompileError) as info:
        einc.compile(folder / "bad.ein", allow_python=True)
    diag = info.value.diagnostics[0]
    assert diag.code == code and diag.span.line == 3 and words in diag.message
    if code == "E011":
        assert "run-time input" in diag.hint


def test_a_rule_gives_a_derivative_to_a_function_whose_body_calls_python(tmp_path):
    """The body computes the value during the build; the `@fn` rule gives the derivative."""
    source = tmp_path / "rule.ein"
    source.write_text("""
        fn sq(x) { python::numpy::square(x) }
        @fn sq(x) { 2.0 * x * @x }
        fn cube(x) { python::numpy::power(x, 3.0) }
        @fn cube(x) { 3.0 * x * x * @x }
        let x = 3.0;
        let y = sq(x) + cube(x);
        let d = @y / @x;
        let h: f64 = 0.5;
        let z = sq(h) * 4.0;
        let dz = @z / @h;
    """)
    out = einc.load(einc.compile(str(source), allow_python=True).vmfb)()
    assert out["y"] == pytest.approx(9.0 + 27.0) and out["d"] == pytest.approx(2 * 3.0 + 3 * 9.0)
    assert out["z"] == 1.0 and out["dz"] == 4.0


def test_without_a_rule_a_python_body_still_has_no_derivative(tmp_path):
    source = tmp_path / "norule.ein"
    source.write_text("fn sq(x) { python::numpy::square(x) }\nlet x = 3.0;\nlet y = sq(x);\nlet d = @y / @x;\n")
    with pytest.raises(CompileError) as info:
        einc.compile(str(source), allow_python=True)
    assert info.value.diagnostics[0].code == "E011" and "no derivative" in info.value.diagnostics[0].message
