"""The storage plan of recurrences (thesis 5.8, Table 5.2): window = max(lookback + 1, tail) when
every later read is a fixed distance from the end and the member is not an output; the whole
tensor otherwise. Each case checks the plan and what the emitted MLIR allocates."""
import os

from einc.driver import front_end, lower


def plan_of(tmp_path, source: str, member: str, outputs: list) -> tuple[dict, str]:
    """The plan of `member` and the emitted MLIR (llvm-cpu) of `source`."""
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    program = front_end(path, outputs)[1]
    plans = {m.name: m.plan for g in program.recurrences for m in g.members}
    return plans[member], str(lower(path, "llvm-cpu", outputs))


def test_two_step_recurrence_read_at_its_end_keeps_three_slots(tmp_path):
    plan, mlir = plan_of(tmp_path, """
        let fib[0] = 0;
        let fib[1] = 1;
        let fib[k in 2..1000] = fib[k - 1] + fib[k - 2];
        let last = fib[999];
    """, "fib", ["last"])
    assert (plan["lookback"], plan["tail"], plan["window"]) == (2, 1, 3)
    assert "tensor<3xi32>" in mlir and "1000xi32" not in mlir


def test_one_step_recurrence_whose_last_three_steps_are_read_keeps_three_slots(tmp_path):
    plan, mlir = plan_of(tmp_path, """
        let x[0] = 0.5;
        let x[t in 1..1000] = 0.9 * x[t - 1] + 0.1;
        let recent = x[997] + x[998] + x[999];
    """, "x", ["recent"])
    assert (plan["lookback"], plan["tail"], plan["window"]) == (1, 3, 3)
    assert "tensor<3xf32>" in mlir and "1000xf32" not in mlir


def test_symbolic_extent_read_at_its_end_keeps_two_slots(tmp_path):
    plan, mlir = plan_of(tmp_path, """
        let y: [f32; T];
        let x[0] = y[0];
        let x[t in 1..T] = x[t - 1] * 0.5 + y[t];
        let last = x[T - 1];
    """, "x", ["last"])
    assert (plan["lookback"], plan["tail"], plan["window"]) == (1, 1, 2)
    assert "flow.dispatch.region -> (tensor<2xf32>)" in mlir     # not tensor<?xf32>{T}


def test_multidimensional_state_keeps_a_window_on_the_recurrence_axis_only(tmp_path):
    plan, mlir = plan_of(tmp_path, """
        let A: [f32; 16, 16];
        let h[0, i in 0..16] = 1.0;
        let h[t in 1..500, i in 0..16] = sum[j](A[i, j] * h[t - 1, j]);
        let final[i] = h[499, i];
    """, "h", ["final"])
    assert (plan["lookback"], plan["tail"], plan["window"]) == (1, 1, 2)
    assert "tensor<2x16xf32>" in mlir and "500x16" not in mlir


def test_a_recurrence_observed_whole_is_materialised(tmp_path):
    plan, mlir = plan_of(tmp_path, """
        let x[0] = 0.5;
        let x[t in 1..1000] = 0.9 * x[t - 1];
    """, "x", ["x"])
    assert plan["lookback"] == 1 and plan["tail"] is None and plan["window"] is None
    assert "whole tensor" in plan["reason"]
    assert "tensor<1000xf32>" in mlir


def test_a_read_at_a_run_time_step_is_a_dynamic_tail_and_materialises(tmp_path):
    plan, mlir = plan_of(tmp_path, """
        let k: [i32; 1];
        let x[0] = 0.5;
        let x[t in 1..1000] = 0.9 * x[t - 1];
        let picked = x[k[0]];
    """, "x", ["picked"])
    assert plan["lookback"] == 1 and plan["tail"] is None and plan["window"] is None
    assert "fixed distance from its end" in plan["reason"]
    assert "tensor<1000xf32>" in mlir


def test_an_unbounded_lookback_materialises(tmp_path):
    plan, mlir = plan_of(tmp_path, """
        let x[0] = 1.0;
        let x[t in 1..1000] = (x[t - 1] + x[t / 2]) * 0.5;
        let last = x[999];
    """, "x", ["last"])
    assert plan["lookback"] is None and plan["window"] is None and "not t - constant" in plan["reason"]
    assert "tensor<1000xf32>" in mlir


def test_a_window_as_long_as_the_recurrence_keeps_the_whole_tensor(tmp_path):
    plan, _ = plan_of(tmp_path, """
        let x[0] = 1.0;
        let x[t in 1..3] = x[t - 1] * 0.5;
        let s = x[0] + x[2];
    """, "x", ["s"])
    assert plan["tail"] == 3 and plan["window"] is None and "every step" in plan["reason"]


def test_a_member_only_its_loop_reads_is_not_read_outside(tmp_path):
    source = """
        let y: [f32; 100];
        let s[0] = 0.0;
        let g[t in 1..100] = 0.5 * s[t - 1] + y[t];
        let s[t in 1..100] = 0.9 * s[t - 1] + g[t];
        let last = s[99];
    """
    inner, _ = plan_of(tmp_path, source, "g", ["last", "s"])
    read_at_end, _ = plan_of(tmp_path, source, "s", ["last"])
    output, _ = plan_of(tmp_path, source, "s", ["s"])
    assert (inner["read_outside"], read_at_end["read_outside"], output["read_outside"]) == (False, True, True)
