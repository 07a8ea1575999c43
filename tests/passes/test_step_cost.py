"""The estimated work of a step (einc.passes.step_cost), which `einc build --explain` reports: a
reduction with one value at every point of the step counts once a step, one using a point's
variable once a point; a size known only at run time leaves it unknown."""
from einc.driver import front_end
from einc.passes.step_cost import step_operations

SOFTMAX = """use std::math::exp;
let u: [f64; T, N];
let w[0, j in 0..N] = u[0, j];
let w[t in 1..T, j in 0..N] = exp(w[t - 1, j] - m) / z + sum[k](u[t, k] * w[t - 1, k]) * {extra}
    where m = max[k](w[t - 1, k]), z = sum[k](exp(w[t - 1, k] - m));
"""


def operations(tmp_path, extra: str, dims) -> int:
    path = tmp_path / "softmax.ein"
    path.write_text(SOFTMAX.replace("{extra}", extra))
    group, = front_end(str(path), ["w"], dims)[1].recurrences
    return step_operations(group)


def test_reductions_of_the_step_count_once_and_those_of_a_point_once_a_point(tmp_path):
    # max, sum and the dot product over the row use no point: work linear in N
    once = [operations(tmp_path, "1.0", {"T": 8, "N": n}) for n in (100, 200, 400)]
    assert once[2] - once[1] == 2 * (once[1] - once[0])
    # a sum whose terms use the point j: quadratic in N
    each = [operations(tmp_path, "sum[k](u[t, k] * w[t - 1, k] * (j as f64))", {"T": 8, "N": n})
            for n in (100, 200, 400)]
    assert each[2] - each[1] > 3 * (each[1] - each[0])


def test_a_run_time_size_leaves_the_work_unknown(tmp_path):
    assert operations(tmp_path, "1.0", None) is None
    assert operations(tmp_path, "1.0", {"N": 100}) > 0       # the steps' number does not matter
