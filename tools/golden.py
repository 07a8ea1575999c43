"""Regenerate the examples' data files and goldens from the NumPy references in tests/examples.

    python tools/golden.py            # write what changed: data files, <stem>.golden.npz/.txt
    python tools/golden.py --check    # only list what would change; exit 1 if anything would

Goldens come from the references only, never from einc (see tests/examples/references.py).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "examples"))
import references  # noqa: E402,F401  (registers the examples)
from catalog import EXAMPLES, EXAMPLES_DIR, INPUT_FILES, identical, load_golden_outputs  # noqa: E402


def update_inputs(write: bool) -> list[Path]:
    changed = []
    for rel, make in INPUT_FILES.items():
        path, array = EXAMPLES_DIR / rel, make()
        if path.exists() and identical({"a": np.load(path)}, {"a": array}):
            continue
        changed.append(path)
        if write:
            np.save(path, array)
    return changed


def update_goldens(write: bool) -> list[Path]:
    """Data files must be current first: references of examples with inputs read them."""
    changed = []
    for ex in EXAMPLES.values():
        ref = ex.compute()
        path = ex.golden_outputs
        if not (path.exists() and identical(load_golden_outputs(path), ref.outputs)):
            changed.append(path)
            if write:
                np.savez(path, **{k: np.asarray(v) for k, v in ref.outputs.items()})
        text = ex.golden_text
        if ref.printed and not (text.exists() and text.read_text() == ref.text):
            changed.append(text)
            if write:
                text.write_text(ref.text)
    return changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only list files that would change")
    args = parser.parse_args()
    changed = update_inputs(write=not args.check)
    if args.check and changed:  # goldens computed from stale inputs would mislead
        return _report(changed, "stale")
    changed += update_goldens(write=not args.check)
    return _report(changed, "stale" if args.check else "wrote")


def _report(paths: list[Path], verb: str) -> int:
    for path in paths:
        print(f"{verb}: {path.relative_to(EXAMPLES_DIR.parent)}")
    return 1 if verb == "stale" and paths else 0


if __name__ == "__main__":
    sys.exit(main())
