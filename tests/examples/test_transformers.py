"""The transformer examples (examples/transformer) against their NumPy references
(transformers.py), with weights from the examples' seeded script written to a temporary folder
beside copies of the programs: DeiT-tiny (12 blocks) and the Whisper-tiny encoder (4 blocks),
each built once on llvm-cpu, and one-block variants of both on vulkan-spirv (lavapipe); and
`--explain`'s list of the kernels each definition became, on the one-block DeiT."""
import importlib.util
import re
import shutil

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import einc
from einc import host_cpu
import transformers
from einc.driver import emit_program
from catalog import EXAMPLES_DIR

FOLDER = EXAMPLES_DIR / "transformer"
_spec = importlib.util.spec_from_file_location("make_weights", FOLDER / "make_weights.py")
make_weights = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_weights)

# One block of each network over small inputs: 32 x 32 images (4 patches), 60 mel frames.
ONE_BLOCK = {
    "deit_one.ein": "mod layers;\nmod deit;\nuse deit::{embed, block, classify};\n"
                    "let X: [f32; B, 3, 32, 32];\nlet logits = classify(block(embed(X), 0));\n",
    "whisper_one.ein": "mod layers;\nmod whisper;\nuse whisper::{embed, block, finish};\n"
                       "let mel: [f32; B, 80, 60];\nlet states = finish(block(embed(mel), 0));\n",
}


def _folder(path, blocks=None, patches=196, frames=3000):
    """The example's programs and weights in `path` (full size without `blocks`)."""
    for source in FOLDER.glob("*.ein"):
        shutil.copy(source, path)
    for name, text in ONE_BLOCK.items():
        (path / name).write_text(text)
    make_weights.save(path / "weights" / "deit", make_weights.deit_weights(blocks or 12, patches))
    make_weights.save(path / "weights" / "whisper", make_weights.whisper_weights(blocks or 4, frames))
    return path


def _weights(path, network):
    return {f.stem: np.load(f) for f in (path / "weights" / network).glob("*.npy")}


def _reference(fn, *args):
    with threadpool_limits(1):      # OpenBLAS threads spin on a loaded machine: one is faster
        return fn(*args)


def _close(got, ref, tol):
    """Within `tol` of the reference's largest magnitude, everywhere."""
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max())


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    return _folder(tmp_path_factory.mktemp("transformer"))


@pytest.fixture(scope="module")
def one_block(tmp_path_factory):
    return _folder(tmp_path_factory.mktemp("transformer_one"), blocks=1, patches=4, frames=60)


def _run(path, target, **inputs):
    art = einc.compile(str(path), target=target, weights_threshold=None)
    device = "vulkan" if target == "vulkan-spirv" else None
    return einc.load(art.vmfb, device=device)(**inputs)


def test_deit_tiny_matches_numpy(full):
    images = np.random.default_rng(7).uniform(-1, 1, (2, 3, 224, 224)).astype(np.float32)
    got = _run(full / "deit_tiny.ein", "llvm-cpu", X=images)["logits"]
    _close(got, _reference(transformers.deit, images, _weights(full, "deit"), 12), 2e-5)


@pytest.mark.full
def test_whisper_encoder_matches_numpy(full):
    mel = np.random.default_rng(8).standard_normal((1, 80, 3000)).astype(np.float32)
    got = _run(full / "whisper_encoder.ein", "llvm-cpu", mel=mel)["states"]
    _close(got, _reference(transformers.whisper, mel, _weights(full, "whisper"), 4), 2e-5)


@pytest.mark.vulkan
@pytest.mark.full
def test_one_block_of_each_on_vulkan(one_block):
    rng = np.random.default_rng(9)
    images = rng.uniform(-1, 1, (2, 3, 32, 32)).astype(np.float32)
    mel = rng.standard_normal((2, 80, 60)).astype(np.float32)
    got = _run(one_block / "deit_one.ein", "vulkan-spirv", X=images)["logits"]
    _close(got, _reference(transformers.deit, images, _weights(one_block, "deit"), 1), 2e-5)
    got = _run(one_block / "whisper_one.ein", "vulkan-spirv", mel=mel)["states"]
    _close(got, _reference(transformers.whisper, mel, _weights(one_block, "whisper"), 1), 2e-5)


def _listed(text: str, kind: str) -> int:
    """How many ops of `kind` the explanation's kernel list names."""
    return sum(int(n or 1) for n, _ in re.findall(rf"(?:(\d+)x )?{kind}(,|$)", text, re.M))


def test_explain_lists_the_kernels_each_definition_became(one_block, monkeypatch):
    # attention as written, as an AVX-512 host lowers it (without AVX-512 it is fused at every size)
    monkeypatch.setattr(host_cpu, "has_avx512", lambda: True)
    source = str(one_block / "deit_one.ein")
    text = emit_program(source, "explain")
    mlir = emit_program(source, "mlir")
    kernels = text.split("kernels per source definition")[1]
    entries = dict(zip(re.findall(r"^  (\S+:\d+)  ", kernels, re.M), re.findall(r"^      (.+)$", kernels, re.M)))
    linear, score, patches = (_line(one_block / f, s) for f, s in
                              (("layers.ein", "let y[n, s, j]"), ("layers.ein", "let score["), ("deit.ein", "let P[")))
    assert "matmul" in entries[f"layers.ein:{linear}"] and "batch_matmul" in entries[f"layers.ein:{score}"]
    assert "matmul" in entries[f"deit.ein:{patches}"] and "conv" not in entries[f"deit.ein:{patches}"]
    # the list counts the module's own ops
    for kind, op in (("batch_matmul", "linalg.batch_matmul "), ("conv", "linalg.conv_"),
                     ("transpose", "linalg.transpose "), ("generic reduction", None)):
        expected = mlir.count(op) if op else len(re.findall(r'iterator_types = \[[^\]]*"reduction"', mlir))
        assert _listed(kernels, kind) == expected, kind


def _line(path, start: str) -> int:
    return next(k for k, line in enumerate(path.read_text().splitlines(), 1) if line.strip().startswith(start))
