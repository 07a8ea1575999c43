"""`einc run FILE.ein`: built into the cache once, rebuilt when anything the module depends on
changes; `.npz` inputs and outputs; `--repeat` timing."""
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import einc.driver

MATMUL = Path(__file__).resolve().parents[2] / "examples" / "basics" / "matmul.ein"
MAIN = 'mod helper;\nlet w = load_npy("w.npy");\nlet x: [f32; N];\nlet y[i] = helper::twice(x[i]) + w[0];\n'
HELPER = "pub fn twice(v) { v * 2.0 }\n"
X = np.array([1.0, -2.0, 0.5], np.float32)
SPECIALIZED = "einc: specialized to the sizes of the inputs: N=3\n"   # x's size: N is fixed to it


@pytest.fixture
def project(tmp_path) -> Path:
    """A program with a module of its own and a load_npy file, and its input."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "main.ein").write_text(MAIN)
    (folder / "helper.ein").write_text(HELPER)
    np.save(folder / "w.npy", np.array([10.0], np.float32))
    np.save(folder / "x.npy", X)
    return folder


def cached_modules(cache: Path) -> list[Path]:
    return sorted((cache / "modules").rglob("*.vmfb"))


def run_project(einc_cli, project, *options):
    return einc_cli("run", project / "main.ein", "-v", "-i", f"x={project / 'x.npy'}", *options)


def test_second_run_is_a_cache_hit_that_does_not_compile(einc_cli, cache, project, monkeypatch):
    status, out, err = run_project(einc_cli, project)
    [module] = cached_modules(cache)
    assert (status, err) == (0, f"{SPECIALIZED}einc: cache miss for {project / 'main.ein'}: building for llvm-cpu into "
                                f"{module}\n")
    assert out == f"w: float32[1] [10.]\ny: float32[3] {np.array2string(X * 2 + 10)}\n"

    def no_compiling(*args):
        raise AssertionError("a cache hit must not compile")
    monkeypatch.setattr(einc.driver, "build_ir", no_compiling)
    assert run_project(einc_cli, project) == (0, out, f"{SPECIALIZED}einc: cache hit for {project / 'main.ein'}: {module}\n")
    assert cached_modules(cache) == [module]


def test_any_change_to_the_key_rebuilds(einc_cli, cache, project):
    assert run_project(einc_cli, project)[0] == 0
    changes = {                                    # applied one after another, each a new key
        "program": lambda: (project / "main.ein").write_text(MAIN + "// a comment changes the source\n"),
        "module": lambda: (project / "helper.ein").write_text("pub fn twice(v) { 2.0 * v }\n"),
        "data": lambda: np.save(project / "w.npy", np.array([20.0], np.float32)),
        "target": lambda: options.extend(["--target", "llvm-cpu-generic"]),
        "dims": lambda: options.append("--generic"),   # N a run-time size, no longer fixed to 3
        "output": lambda: options.extend(["--output", "y"]),
    }
    options: list = []
    for count, (change, apply) in enumerate(changes.items(), start=2):
        apply()
        status, out, err = run_project(einc_cli, project, *options)
        assert status == 0 and "einc: cache miss" in err, change
        assert len(cached_modules(cache)) == count, change
        w = 20 if list(changes).index(change) >= list(changes).index("data") else 10
        assert f"y: float32[3] {np.array2string(X * 2 + w)}\n" in out, change


def test_a_damaged_cache_entry_is_rebuilt(einc_cli, cache, project):
    assert run_project(einc_cli, project)[0] == 0
    [module] = cached_modules(cache)
    data = bytearray(module.read_bytes())
    data[len(data) // 2] ^= 0x40
    module.write_bytes(bytes(data))
    status, _, err = run_project(einc_cli, project)
    assert status == 0 and err.startswith(f"{SPECIALIZED}einc: cache miss")
    assert cached_modules(cache) == [module] and module.read_bytes() != bytes(data)


def test_program_errors_show_diagnostics_and_cache_nothing(einc_cli, cache, project):
    (project / "main.ein").write_text(MAIN.replace("w[0]", "w[0] + true"))       # f32 + bool
    status, out, err = run_project(einc_cli, project)
    assert (status, out) == (1, "") and err.startswith("error[E002]: ")
    assert cached_modules(cache) == []


def test_run_usage_errors(einc_cli, cache, project, modules):
    status, _, err = einc_cli("run", modules["llvm-cpu"], "--target", "llvm-cpu")
    assert status == 2 and err.startswith("error: --target, --output, --dim, --allow-python, "
                                          "--unchecked-indices and --generic apply when PROGRAM is a .ein source")
    status, _, err = einc_cli("run", project / "main.ein", "--repeat", "0")
    assert status == 2 and "--repeat" in err
    assert einc_cli("run", project / "absent.ein") == (1, "", f"error: cannot read {project / 'absent.ein'}: no such file\n")


@pytest.fixture(scope="module")
def matmul_io(tmp_path_factory):
    folder = tmp_path_factory.mktemp("matmul_io")
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)
    np.savez(folder / "inputs.npz", A=a, B=b)
    np.savez(folder / "only_a.npz", A=a)
    np.savez(folder / "extra.npz", A=a, B=b, bias=np.ones(2))
    np.savez(folder / "lower.npz", a=a, B=b)
    np.save(folder / "B5.npy", rng.standard_normal((3, 5)).astype(np.float32))
    return folder, a, b


def test_npz_binds_every_array_by_name_and_writes_every_output(einc_cli, built, matmul_io, tmp_path):
    folder, a, b = matmul_io
    status, out, err = einc_cli("run", built(MATMUL), "--input", folder / "inputs.npz", "--out", tmp_path / "r.npz")
    assert (status, err) == (0, "") and out.startswith("C is 4 x 2;")
    with np.load(tmp_path / "r.npz") as results:
        assert sorted(results.files) == ["C", "row_norms"]
        np.testing.assert_allclose(results["C"], a @ b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(results["row_norms"], np.linalg.norm(a @ b, axis=1), rtol=1e-5)


def test_an_explicit_input_wins_over_the_archive(einc_cli, built, matmul_io, tmp_path):
    folder, a, _ = matmul_io
    b5 = np.load(folder / "B5.npy")
    status, _, err = einc_cli("run", built(MATMUL), "-i", f"B={folder / 'B5.npy'}", "-i", folder / "inputs.npz",
                              "--out", tmp_path / "out")
    assert (status, err) == (0, "")
    np.testing.assert_allclose(np.load(tmp_path / "out" / "C.npy"), a @ b5, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("archives, message", [
    (["only_a.npz"], "missing input 'B' (float32[K, N]): no array 'B' in {folder}/only_a.npz and no --input B=..."),
    (["extra.npz"], "{folder}/extra.npz has an array 'bias' that is not an input; the program's inputs are: A, B"),
    (["lower.npz"], "{folder}/lower.npz has an array 'a' that is not an input (did you mean 'A'?); the program's "
                    "inputs are: A, B"),
    (["inputs.npz", "only_a.npz"], "array 'A' is in both {folder}/inputs.npz and {folder}/only_a.npz"),
    (["absent.npz"], "cannot read {folder}/absent.npz: no such file"),
])
def test_archive_errors_name_the_arrays(einc_cli, built, matmul_io, archives, message):
    folder = matmul_io[0]
    argv = ["run", built(MATMUL)] + [arg for name in archives for arg in ("-i", folder / name)]
    assert einc_cli(*argv) == (1, "", f"error: {message.format(folder=folder)}\n")


def test_a_damaged_archive_is_one_line(einc_cli, built, matmul_io, tmp_path):
    data = (matmul_io[0] / "inputs.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    status, _, err = einc_cli("run", built(MATMUL), "-i", tmp_path / "cut.npz")
    assert status == 1 and err.startswith(f"error: cannot read {tmp_path / 'cut.npz'}: not a valid .npz file (")
    assert err.count("\n") == 1


TIMING = re.compile(r"^timing: 7 calls of main after 1 warm-up: min [0-9.]+ (us|ms), median [0-9.]+ (us|ms) "
                    r"per call \(call to completion, inputs already on the device: upload and download excluded\)$")


@pytest.mark.parametrize("target", ["llvm-cpu", pytest.param("vulkan-spirv", marks=pytest.mark.vulkan)])
def test_repeat_times_main_after_a_warm_up(einc_cli, built, matmul_io, target):
    folder, a, b = matmul_io
    status, out, err = einc_cli("run", built(MATMUL, target), "-i", folder / "inputs.npz", "--repeat", "7")
    lines = out.splitlines()
    assert (status, err) == (0, "")
    assert lines[0].startswith("C is 4 x 2;") and sum(line.startswith("C is") for line in lines) == 1
    assert lines[1].startswith("C: float32[4, 2]") and TIMING.match(lines[3])


def test_python_results_are_part_of_the_key(einc_cli, cache, tmp_path):
    folder = tmp_path / "py"
    folder.mkdir()
    (folder / "reader.py").write_text("def scale():\n    return float(open('scale.txt').read())\n")
    (folder / "scale.txt").write_text("2.5")
    (folder / "main.ein").write_text("let s = python::reader::scale();\nlet y = s * 2.0;\n")
    status, _, err = einc_cli("run", folder / "main.ein")
    assert status == 1 and "--allow-python" in err and cached_modules(cache) == []
    status, out, err = einc_cli("run", folder / "main.ein", "--allow-python", "-v")
    assert status == 0 and err.startswith("einc: cache miss") and "y: float32 = 5.0" in out
    assert einc_cli("run", folder / "main.ein", "--allow-python", "-v")[2].startswith("einc: cache hit")
    (folder / "scale.txt").write_text("4.0")          # the function returns something else now
    status, out, err = einc_cli("run", folder / "main.ein", "--allow-python", "-v")
    assert err.startswith("einc: cache miss") and "y: float32 = 8.0" in out


def test_half_precision_npy_inputs_and_a_wrong_dtype(einc_cli, cache, tmp_path):
    # np.save writes a bfloat16 array as 2-byte voids (.npy cannot name it): read back as bf16
    (tmp_path / "h.ein").write_text("let x: [bf16; N];\nlet y[i] = x[i] * 2.0;\n")
    x = np.array([1.5, -0.1, 3.0], ml_dtypes.bfloat16)
    np.save(tmp_path / "x.npy", x)
    status, _, err = einc_cli("run", tmp_path / "h.ein", "-i", f"x={tmp_path / 'x.npy'}", "--out", tmp_path / "o.npz")
    assert status == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["y"].view(ml_dtypes.bfloat16),
                                  (x.astype(np.float32) * 2).astype(ml_dtypes.bfloat16))
    np.save(tmp_path / "x.npy", x.astype(np.float16))
    assert einc_cli("run", tmp_path / "h.ein", "-i", f"x={tmp_path / 'x.npy'}") == \
        (1, "", "error: input x: expected bfloat16, got float16\n")
