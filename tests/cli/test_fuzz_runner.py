"""A fixed-seed sample of the `einc run` mutation fuzzer (tools/fuzz_runner.py; `python
tools/fuzz_runner.py -n 3000` for a long run): no mutant may end in a traceback, an internal
error, a signal, a hang or anything but one `error:` line."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import fuzz_runner  # noqa: E402
from tests.tiers import by_tier  # noqa: E402


def test_a_fixed_sample_of_mutants_runs_clean(tmp_path):
    # the fast tier's seed draws every operator within its first 12 mutants
    count, seed = by_tier((16, 2220), (120, 2024))
    report = fuzz_runner.fuzz(count, seed=seed, workdir=tmp_path)
    assert [f"{o.problem}: einc {' '.join(o.mutant.argv)}\n{o.stderr}" for o in report.bad] == []
    operators = {o.mutant.operator for o in report.outcomes}
    assert operators == set(fuzz_runner.OPERATORS)
    ran = [o for o in report.outcomes if o.status == 0]
    refused = [o for o in report.outcomes if o.status in (1, 2)]
    assert len(ran) >= count // 12 and len(refused) >= count // 2      # both paths are exercised


def test_the_judge_flags_what_users_must_never_see():
    mutant = fuzz_runner.Mutant("names", "matmul", ["run", "m.vmfb"])
    judged = {text: fuzz_runner.judge(mutant, status, "", text).problem for status, text in [
        (1, "error: missing input 'A'\n"), (1, "m.ein:4:1: error[E006]: assertion failed: s > 0\n"), (0, ""), (1, "internal error: KeyError: 'x'\n  (this is a bug)\n"),
        (1, "Traceback (most recent call last):\n"), (0, "RuntimeWarning: overflow\n"), (1, "error: a\nerror: b\n")]}
    assert list(judged.values()) == [None, None, None, "internal error or traceback", "internal error or traceback",
                                     "exit 0 with output on stderr", "refused without exactly one `error:` line"]
    assert fuzz_runner.judge(mutant, -11, "", "").problem == "killed by signal 11"
    assert fuzz_runner.judge(mutant, None, "", "").problem.startswith("no answer within")
