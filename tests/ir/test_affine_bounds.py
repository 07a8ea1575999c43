"""einc/ir/affine: what holds for every admissible size, with floor quotients of sizes."""
from einc.ir.affine import surely_negative, surely_nonnegative
from einc.ir.types import Lin, Quotient, Sym


def _sym(name: str, axis: int) -> Lin:
    return Lin.of(Sym(name, 0, axis))


def test_a_stride_two_window_stays_in_a_run_time_size():
    """For i < H / 2 and a < 2: H - 1 - (2 i + a) >= H - 2 floor(H / 2) >= 0."""
    h = _sym("H", 0)
    half = Lin.of(Quotient(h, 2))
    last = h - 1 - ((half - 1).scale(2) + 1)
    assert surely_nonnegative(last)
    assert not surely_nonnegative(h - 1 - half.scale(2) - 1)       # one column too far: H even
    assert surely_nonnegative(h - half.scale(3) + half)           # 2 floor(H / 2) <= H
    assert not surely_nonnegative(h - half.scale(3))               # 3 floor(H / 2) may pass H


def test_a_quotient_with_a_coefficient_it_does_not_divide():
    """floor(H / 3) <= H / 3, so H - 2 floor(H / 3) >= H / 3 > 0 and never negative."""
    h = _sym("H", 0)
    third = Lin.of(Quotient(h, 3))
    assert surely_nonnegative(h - third.scale(2))
    assert not surely_negative(h - third.scale(2))


def test_a_multiple_of_a_quotient_prints_with_its_parentheses():
    """2 * floor(H / 2) printed as `2*(H) / 2`, which reads as H: a shape error between H and a
    depth_to_space of a space_to_depth looked like the compiler's mistake (found by the hold-out
    program pixel_shuffle). A compound key is parenthesized when multiplied."""
    q = Quotient(Lin.of(Sym("H", 0, 2)), 2)
    assert repr(Lin.of(q, 2)) == "2*((H) / 2)" and repr(Lin.of(q, -1) + 1) == "-((H) / 2) + 1"
    assert repr(Lin.of(Sym("H", 0, 2), 2)) == "2*H"
