"""Every kernel einc builds for vulkan-spirv is valid SPIR-V, as `spirv-val` judges it for the
environment einc asks for (SPIR-V 1.3, the version of Vulkan 1.1).

lavapipe runs some invalid kernels anyway, but a real driver may not: an NVIDIA driver crashed
creating the pipeline of a kernel with an OpPhi of pointers (issue 11 item 12), so the Vulkan
tests passing proves nothing here. The programs are every example (those that use f64, which
vulkan-spirv rejects, as their f32 variants), the programs the Vulkan tests run and the
recurrence, RNN and training programs. They are compiled only, two at a time, each once: IREE
dumps the SPIR-V of every kernel and spirv-val (Debian's spirv-tools, installed by
tools/setup_vulkan.sh) checks each (spirv.py). The examples that tests/examples/test_goldens.py
builds whole for Vulkan are checked there, on the build it runs, not built again here. The fast
tier leaves out the second and later programs of one kind (`FULL_ONLY`): the fixture builds only
the programs whose cases run.
"""
from __future__ import annotations

import importlib.util
import multiprocessing
import re
import shutil
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from einc.backend.iree_compile import compile_mlir
from einc.driver import lower
from einc.target import get
from tests.backend import spirv

ROOT = Path(__file__).resolve().parents[2]
TARGET = "vulkan-spirv"


def _constant(test_file: str, name: str) -> str:
    """A program another test runs on Vulkan, read from that test's module (loaded as pytest
    loads it, with its folder's helper modules importable)."""
    folder = str((ROOT / "tests" / test_file).parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(Path(test_file).stem, ROOT / "tests" / test_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def _vulkan_test_programs() -> dict[str, str]:
    recurrences = "mlir/test_recurrences_lowering.py"
    return {
        "matmul": _constant("e2e/test_vulkan.py", "MATMUL"),
        "conv_guards_reductions": _constant("e2e/test_vulkan.py", "CONV"),
        "bool_arrays": _constant("e2e/test_vulkan.py", "BOOL_ARRAYS"),
        "scalar_kalman": _constant(recurrences, "KALMAN") + "let x_last = x[T - 1];\n",
        "rnn": _constant(recurrences, "RNN"),
        "logistic_kernel": _constant(recurrences, "logistic")(140_000),
        "rnn_gradient": _constant("e2e/test_recurrence_derivatives.py", "RNN").replace("f64", "f32"),
        "kalman_derivatives": _constant("e2e/test_recurrence_derivatives.py", "KALMAN").replace("f64", "f32"),
        "training_descent": _constant("e2e/test_training.py", "CLAUSE_BODY_DESCENT").format(t="f32"),
        "unit_axes_group": _constant("e2e/test_recurrence_storage_shapes.py", "UNIT_AXES_GROUP"),
        "history_in_a_host_loop": _constant("e2e/test_recurrence_storage_shapes.py", "HISTORY_BESIDE_A_STEP_TENSOR"),
        "fixed_step_rnn": _constant("mlir/test_recurrence_chunks.py", "FIXED_STEP_RNN"),
        "host_chunks_stacked": _constant("mlir/test_recurrence_chunks.py", "STACKED"),
        "host_chunks_prefix": _constant("mlir/test_recurrence_chunks.py", "PREFIX"),
        "host_chunks_descent": _constant("mlir/test_recurrence_chunks.py", "ANCHORED_DESCENT"),
        "windows_without_batch": _constant("mlir/test_cpu_poolings.py", "BARE"),
        "many_run_time_sizes": _constant("e2e/test_vulkan.py", "MANY_RUN_TIME_SIZES"),
    }


def _example_programs() -> dict[str, Path]:
    """Every example but examples/transformer, whose weights are made at test time
    (tests/examples/test_transformers.py runs a block of each on vulkan-spirv), those in f16 or
    bf16, which vulkan-spirv refuses (tests/examples/test_goldens.py checks it does), and those
    whose kernels test_goldens.py checks on the build it runs. A module another example reads
    with `mod` is built as part of that example (alone it is no program: E006)."""
    checked = set(_constant("examples/test_goldens.py", "SPIRV_CHECKED_WHOLE"))
    paths = sorted((ROOT / "examples").rglob("*.ein"))
    modules = {path.parent / f"{name}.ein" for path in paths
               for name in re.findall(r"^mod (\w+);", path.read_text(), re.M)}
    return {name: path for path in paths
            if (name := str(path.relative_to(ROOT / "examples"))) not in checked and path not in modules
            and path.parent.name != "transformer" and not re.search(r"\bb?f16\b", path.read_text())}


def _f32_copy(path: Path, workdir: Path) -> Path:
    """The example with every f64 made f32, beside copies of its folder's modules and data."""
    folder = workdir / path.parent.name
    shutil.copytree(path.parent, folder)
    for module in folder.glob("*.ein"):
        module.write_text(module.read_text().replace("f64", "f32"))
    return folder / path.name


def _uses_f64(path: Path) -> bool:
    return any("f64" in module.read_text() for module in path.parent.glob("*.ein"))


def validate(name: str, program: str | Path) -> tuple[int, list[str]]:
    """Build `program` (a path, or source text) for vulkan-spirv and spirv-val each kernel: the
    number of kernels and one line per invalid one. Runs in a worker process."""
    with tempfile.TemporaryDirectory(prefix="einc-spirv-") as tmp:
        workdir = Path(tmp)
        if isinstance(program, Path):
            path = _f32_copy(program, workdir) if _uses_f64(program) else program
        else:
            path = workdir / "program.ein"
            path.write_text(program)
        dump = workdir / "kernels"
        compile_mlir(lower(str(path), TARGET, None), get(TARGET), spirv.dump_flags(dump))
        return spirv.invalid_kernels(name, dump)


PROGRAMS: dict[str, str | Path] = {**_example_programs(), **_vulkan_test_programs()}
# Programs of a kind another program here has (same constructs, other equations or sizes):
# the full tier only.
FULL_ONLY = {"basics/functions.ein", "basics/strings.ein", "economics/savings.ein", "economics/value_iteration.ein",
             "ode/fitzhugh_nagumo.ein", "ode/sir.ein", "pde/advection_1d.ein", "pde/heat_1d.ein",
             "recurrences/fibonacci.ein", "recurrences/random_walk.ein", "train/train_linreg.ein",
             "kalman_derivatives", "host_chunks_prefix", "host_chunks_descent", "scalar_kalman",
             "many_run_time_sizes"}
# test_the_dump_finds_every_kernel reads these whatever runs
DUMP_CHECKED = ("matmul", "rnn")


def _to_build(request) -> list[str]:
    """The programs whose test cases this session runs, and those the dump test reads."""
    names = {item.callspec.params["name"] for item in request.session.items
             if item.module is request.module and hasattr(item, "callspec")}
    return sorted(names | set(DUMP_CHECKED))


@pytest.fixture(scope="module")
def results(request) -> dict[str, tuple[int, list[str]]]:
    if not spirv.available():
        pytest.skip(spirv.MISSING)
    # spawn, not fork: this process may hold runtime threads from other tests
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {name: pool.submit(validate, name, PROGRAMS[name]) for name in _to_build(request)}
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.full) if name in FULL_ONLY else name
                                  for name in sorted(PROGRAMS)])
def test_every_kernel_is_valid_spirv(results, name):
    assert results[name][1] == []


def test_the_dump_finds_every_kernel(results):
    # a dump that found nothing would make every check above pass
    assert FULL_ONLY < set(PROGRAMS)
    assert results["matmul"][0] >= 1 and results["rnn"][0] >= 2


def test_a_kept_value_is_read_outside_the_branch_so_no_pointer_phi(tmp_path):
    # regression (issue 11 item 12): a clause active only at some steps kept the slot's value in
    # the else branch of an scf.if whose then branch was another read; MLIR merged the two reads
    # into one through a pointer phi, which spirv-val rejects and an NVIDIA driver crashed on
    if not spirv.available():
        pytest.skip(spirv.MISSING)
    program = """
        let y: [f32; T];
        let s[0] = y[0];
        let s[t in 1..T] = 0.3 * y[t] + 0.7 * s[t - 1];
    """
    assert validate("first_step_clause", program)[1] == []
