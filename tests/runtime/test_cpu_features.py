"""A module built for llvm-cpu records the instruction set extensions of the CPU it was built
on, and a CPU without one of them refuses it with one line instead of crashing on the first
such instruction. llvm-cpu-generic modules record none and run anywhere."""
from __future__ import annotations

import numpy as np
import pytest

from einc import host_cpu
from einc.backend import compile_mlir
from einc.cli import _run_cli
from einc.runtime import RunError, load
from einc.runtime.program import read_signature
from einc.target import get
from mlir_samples import compiled, sample_text

FAKE = "avx1024_fake"   # an extension no CPU has


def test_llvm_cpu_records_this_cpus_extensions_and_generic_none():
    assert read_signature(compiled("matmul", "llvm-cpu"), "m").cpu_features == tuple(host_cpu.isa_features())
    assert read_signature(compiled("matmul", "llvm-cpu-generic"), "m").cpu_features is None


@pytest.fixture(scope="module")
def built_on_a_bigger_cpu(tmp_path_factory):
    """A matmul module whose recorded extensions include one this CPU lacks, saved to a file
    (built once for the tests that load it)."""
    real = host_cpu.isa_features()
    if not real:
        pytest.skip("this system does not say which extensions its CPU has")
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(host_cpu, "isa_features", lambda: sorted(real + [FAKE]))
        vmfb = compile_mlir(sample_text("matmul", "llvm-cpu"), get("llvm-cpu"))
    path = tmp_path_factory.mktemp("bigger") / "bigger.vmfb"
    path.write_bytes(vmfb)
    return path


def test_a_cpu_lacking_a_recorded_extension_refuses_the_module(built_on_a_bigger_cpu):
    with pytest.raises(RunError, match=rf"^{built_on_a_bigger_cpu} was built for llvm-cpu on a CPU with {FAKE}, "
                                       r"which this CPU lacks; .*llvm-cpu-generic"):
        load(built_on_a_bigger_cpu)


def test_einc_run_says_so_in_one_line(built_on_a_bigger_cpu, capsys):
    assert _run_cli(["run", str(built_on_a_bigger_cpu)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and FAKE in err


def test_the_same_cpu_runs_it():
    with load(compiled("matmul", "llvm-cpu")) as program:
        out = program(A=np.eye(2, dtype=np.float32), B=np.eye(2, dtype=np.float32), s=2.0)["C"]
    np.testing.assert_array_equal(out, 2 * np.eye(2))


@pytest.mark.parametrize("flags, unit", [("fpu sse2 avx avx2 fma avx512f avx512bw", "avx512"),
                                         ("fpu sse2 avx avx2 fma bmi2", "avx2"), ("fpu sse2 avx avx2", None),
                                         ("fpu sse2 avx", None), (None, None)])
def test_the_vector_unit_is_read_off_the_cpus_flags(monkeypatch, flags, unit):
    """AVX-512 where `avx512f` is there, AVX2 where `avx2` and `fma` are, else none (arm64 has no
    `flags`): what einc's register tiles are chosen for (einc/mlir/dense/cpu_matmuls.py)."""
    monkeypatch.setattr(host_cpu, "cpuinfo_fields", lambda: {} if flags is None else {"flags": flags})
    assert host_cpu.vector_unit() == unit
    assert host_cpu.has_avx512() == (unit == "avx512")
