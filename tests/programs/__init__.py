"""Einlang programs that several tests and the benchmarks share, one `.ein` file each, so a
program is written once: `source("rnn")` is the text of tests/programs/rnn.ein. (A file read
for its line numbers, kalman_local_level.ein, starts with its first statement.) `built` builds a
program once per test process."""
import functools
from pathlib import Path

FOLDER = Path(__file__).parent


def source(name: str) -> str:
    return (FOLDER / f"{name}.ein").read_text(encoding="utf-8")


def built(text: str, target: str = "llvm-cpu", outputs: list[str] | None = None, dims: dict | None = None):
    """`einc.compile(text, target, outputs=..., dims=...)`, built once per test process: the
    parametrizations of a test that run one program at several run-time sizes share its build."""
    return _built(text, target, None if outputs is None else tuple(outputs),
                  None if dims is None else tuple(sorted(dims.items())))


@functools.lru_cache(maxsize=None)
def _built(text: str, target: str, outputs: tuple | None, dims: tuple | None):
    import einc
    return einc.compile(text, target=target, outputs=None if outputs is None else list(outputs),
                        dims=None if dims is None else dict(dims))
