"""Einlang programs that several tests and the benchmarks share, one `.ein` file each, so a
program is written once: `source("rnn")` is the text of tests/programs/rnn.ein. (A file read
for its line numbers, kalman_local_level.ein, starts with its first statement.) `built` builds a
program once per test process. holdout/ holds programs written as users would write them, each
checked against NumPy by tests/e2e/test_holdout_programs.py."""
import functools
from pathlib import Path

FOLDER = Path(__file__).parent


def source(name: str) -> str:
    return (FOLDER / f"{name}.ein").read_text(encoding="utf-8")


def built(text: str, target: str = "llvm-cpu", outputs: list[str] | None = None, dims: dict | None = None,
          **options):
    """`einc.compile(text, target, outputs=..., dims=..., **options)`, built once per test process:
    the tests that run one program on several inputs (or at several run-time sizes) share its
    build. A build that fails is not kept: each call raises its CompileError again."""
    return _built(text, target, None if outputs is None else tuple(outputs),
                  None if dims is None else tuple(sorted(dims.items())), tuple(sorted(options.items())))


@functools.lru_cache(maxsize=None)
def _built(text: str, target: str, outputs: tuple | None, dims: tuple | None, options: tuple):
    import einc
    return einc.compile(text, target=target, outputs=None if outputs is None else list(outputs),
                        dims=None if dims is None else dict(dims), **dict(options))
