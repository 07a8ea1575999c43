"""Seeded random weights for the transformer examples, written as .npy files under weights/.

    python examples/transformer/make_weights.py                 # both networks, full size
    python examples/transformer/make_weights.py --blocks 1 --out DIR --patches 4 --frames 60

The weights are made, not trained (tens of MB: they are not in the repository); the tests make
them in a temporary folder and compare einc's outputs with tests/examples/transformers.py.
Block l's weights are row l of stacked arrays [L, ..], as the programs read them.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _blocks(rng, L: int, D: int, M: int) -> dict[str, np.ndarray]:
    """Pre-norm encoder blocks of width D and MLP width M, stacked over L."""
    def normal(*shape, scale=0.02):
        return (scale * rng.standard_normal(shape)).astype(np.float32)
    return dict(ln1_g=1 + normal(L, D, scale=0.1), ln1_b=normal(L, D), w_qkv=normal(L, D, 3 * D),
                b_qkv=normal(L, 3 * D), w_out=normal(L, D, D), b_out=normal(L, D),
                ln2_g=1 + normal(L, D, scale=0.1), ln2_b=normal(L, D), w_up=normal(L, D, M),
                b_up=normal(L, M), w_down=normal(L, M, D), b_down=normal(L, D))


def deit_weights(blocks: int = 12, patches: int = 196, seed: int = 0) -> dict[str, np.ndarray]:
    """DeiT-tiny: width 192, MLP 768, 16 x 16 RGB patches, 1000 classes."""
    rng = np.random.default_rng(seed)
    D = 192
    w = dict(patch_w=(rng.standard_normal((D, 3, 16, 16)) / 28).astype(np.float32),
             patch_b=(0.02 * rng.standard_normal(D)).astype(np.float32),
             cls=(0.02 * rng.standard_normal(D)).astype(np.float32),
             pos=(0.02 * rng.standard_normal((1 + patches, D))).astype(np.float32))
    w |= _blocks(rng, blocks, D, 4 * D)
    w |= dict(norm_g=(1 + 0.1 * rng.standard_normal(D)).astype(np.float32),
              norm_b=(0.02 * rng.standard_normal(D)).astype(np.float32),
              head_w=(0.02 * rng.standard_normal((D, 1000))).astype(np.float32),
              head_b=(0.02 * rng.standard_normal(1000)).astype(np.float32))
    return w


def whisper_weights(blocks: int = 4, frames: int = 3000, seed: int = 1) -> dict[str, np.ndarray]:
    """The Whisper-tiny encoder: 80 mel channels, width 384, MLP 1536, frames / 2 positions."""
    rng = np.random.default_rng(seed)
    D = 384
    w = dict(conv1_w=(rng.standard_normal((D, 80, 3)) / np.sqrt(240)).astype(np.float32),
             conv1_b=(0.02 * rng.standard_normal(D)).astype(np.float32),
             conv2_w=(rng.standard_normal((D, D, 3)) / np.sqrt(3 * D)).astype(np.float32),
             conv2_b=(0.02 * rng.standard_normal(D)).astype(np.float32),
             pos=(0.02 * rng.standard_normal((frames // 2, D))).astype(np.float32))
    w |= _blocks(rng, blocks, D, 4 * D)
    w |= dict(post_g=(1 + 0.1 * rng.standard_normal(D)).astype(np.float32),
              post_b=(0.02 * rng.standard_normal(D)).astype(np.float32))
    return w


def save(folder: Path, weights: dict[str, np.ndarray]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, array in weights.items():
        np.save(folder / f"{name}.npy", array)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "weights", help="folder of deit/ and whisper/")
    parser.add_argument("--blocks", type=int, help="blocks of each network (default 12 and 4)")
    parser.add_argument("--patches", type=int, default=196, help="DeiT patches (196 for 224 x 224)")
    parser.add_argument("--frames", type=int, default=3000, help="Whisper mel frames (even)")
    args = parser.parse_args()
    save(args.out / "deit", deit_weights(args.blocks or 12, args.patches))
    save(args.out / "whisper", whisper_weights(args.blocks or 4, args.frames))


if __name__ == "__main__":
    main()
