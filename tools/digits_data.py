"""Write scikit-learn's bundled 8x8 digits as a fixed train/test split of .npy files for `einc run`.

    python tools/digits_data.py build/digits     # X_train.npy y_train.npy X_test.npy y_test.npy

The dataset ships inside scikit-learn (nothing is downloaded). The split is a fixed permutation
(seed 0): 1,400 training digits and the other 397 held out. Pixels stay in 0..16 (float32);
labels are int32.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

TRAIN_SIZE = 1400


def digits_split() -> dict:
    from sklearn.datasets import load_digits
    digits = load_digits()
    order = np.random.default_rng(0).permutation(len(digits.target))
    train, test = order[:TRAIN_SIZE], order[TRAIN_SIZE:]
    X, y = digits.data.astype(np.float32), digits.target.astype(np.int32)
    return {"X_train": X[train], "y_train": y[train], "X_test": X[test], "y_test": y[test]}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, array in digits_split().items():
        np.save(out / f"{name}.npy", array)
    print(f"wrote {', '.join(f'{name}.npy' for name in digits_split())} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
