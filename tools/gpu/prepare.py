"""Stage what the GPU machine needs in .gpu/ (a folder .git/info/exclude ignores; pass it as the
device tool's `carry`): vulkan-spirv modules of the cases in sources.py and of DeiT-tiny built
here, einc's source (the runner imports einc.runtime, which needs no compiler), the MNIST data,
the IREE runtime wheel for the machine's Python 3.12, the Vulkan loader's .debs, and the
scripts. Then, on the device: `bash .gpu/run.sh [cases]`.

    .venv/bin/python tools/gpu/prepare.py
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
STAGE = REPO / ".gpu"
sys.path.insert(0, str(HERE))
from sources import CASES  # noqa: E402

RUNTIME = "iree-base-runtime==3.13.0"
LOADER = ["libvulkan1", "libegl1", "libglvnd0", "libopengl0", "libgl1", "libglx0", "libgles2"]


def build(name: str, source: str, options: list[str], into: Path) -> None:
    path = REPO / source if source.endswith(".ein") else into / f"{name}.ein"
    if not source.endswith(".ein"):
        path.write_text(source)
    command = [sys.executable, "-m", "einc", "build", str(path), "-o", str(into / f"{name}.vmfb"),
               "--target", "vulkan-spirv", *options]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    print(name, "built" if done.returncode == 0 else "FAILED " + done.stderr[-500:])


def stage_transformer() -> None:
    vit = STAGE / "vit"
    vit.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "examples/transformer/make_weights.py"], cwd=REPO, check=True)
    build("deit_b8", "examples/transformer/deit_tiny.ein", ["--dim", "B=8"], vit)
    build("deit_named", "examples/transformer/deit_tiny.ein", [], vit)
    (vit / "deit_named.irpa").unlink(missing_ok=True)     # the same archive: run.sh copies it
    for f in (REPO / "examples/transformer/make_weights.py", REPO / "tests/examples/transformers.py"):
        shutil.copy(f, vit)


def stage_downloads() -> None:
    if not list((STAGE / "whl").glob("*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.12", "--implementation", "cp", "--platform", "manylinux_2_28_x86_64",
                        "-d", str(STAGE / "whl"), RUNTIME], check=True)
    (STAGE / "gl").mkdir(exist_ok=True)
    if not list((STAGE / "gl").glob("*.deb")):
        subprocess.run(["apt-get", "download", *LOADER], cwd=STAGE / "gl", check=True)


def main() -> None:
    modules = STAGE / "modules"
    modules.mkdir(parents=True, exist_ok=True)
    for name, source, options in CASES:
        build(name, source, options, modules)
    stage_transformer()
    shutil.rmtree(STAGE / "src", ignore_errors=True)
    shutil.copytree(REPO / "einc", STAGE / "src" / "einc", ignore=shutil.ignore_patterns("__pycache__", "stdlib"))
    shutil.copytree(REPO.parent / "shared" / "data" / "mnist", STAGE / "mnist", dirs_exist_ok=True)
    for script in ("gpu_bench.py", "run.sh"):
        shutil.copy(HERE / script, STAGE)
    stage_downloads()


if __name__ == "__main__":
    main()
