"""A pytest run of its own over test cases written to a folder, under the suite's conftest.py:
how the suite-wide rules of tests/conftest.py are themselves tested."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_under_the_suite_rules(folder: Path, cases: str) -> str:
    """pytest's quiet output for `cases` (a test module's text) run in `folder`, warnings left out."""
    (folder / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    (folder / "test_cases.py").write_text(cases)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:warnings",
                          str(folder)], cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    return run.stdout
