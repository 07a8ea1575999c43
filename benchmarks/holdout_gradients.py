"""The training gradients of two hold-out programs, one output per build, next to NumPy.

    .venv/bin/python benchmarks/holdout_gradients.py [OUTPUT ..]   (e.g. lstm_lm:dWh tcn_dilated:dK)

lstm_lm's `dWh` and `dEmb` (BPTT through an LSTM) and tcn_dilated's `dK` (a dilated convolution
over layers, differentiated through the layers' recurrence), with their forward outputs for scale,
at the sizes of tests/e2e/test_holdout_programs_5b.py. Each output is built alone and checked
against the case's NumPy reference (which computes every output of the case, forward and backward,
by hand). As `benchmarks/run.py --one-core`: one pinned core, einc on local-sync, single-threaded
BLAS, a sample is the process CPU time; the best of SAMPLES after a warm-up call.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.run import run_on_one_core  # noqa: E402

SAMPLES = 15
OUTPUTS = ["lstm_lm:logits", "lstm_lm:dWh", "lstm_lm:dEmb", "tcn_dilated:h", "tcn_dilated:dK"]


def best_ms(f) -> float:
    f()
    samples = []
    for _ in range(SAMPLES):
        start = time.process_time()
        f()
        samples.append(time.process_time() - start)
    return min(samples) * 1e3


def main() -> int:
    run_on_one_core()
    import einc
    from tests.e2e.test_holdout_programs import HOLDOUT
    from tests.e2e.test_holdout_programs_5b import CASES
    for item in sys.argv[1:] or OUTPUTS:
        name, output = item.split(":")
        case, inputs = CASES[name], CASES[name]["inputs"]()
        program = einc.load(einc.compile((HOLDOUT / f"{name}.ein").read_text(), outputs=[output]), device="local-sync")
        want = case["ref"](**inputs)[output]
        np.testing.assert_allclose(np.asarray(program(**inputs)[output], np.float64), want, *case["tol"])
        print(f"{item:18s} einc {best_ms(lambda: program(**inputs)):8.2f} ms   "
              f"NumPy (every output) {best_ms(lambda: case['ref'](**inputs)):7.2f} ms", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
