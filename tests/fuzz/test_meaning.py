"""The differential fuzzer's oracle: the NumPy meaning of a program structure follows
LANGUAGE.md, and the Einlang it renders says the same thing (checked against hand-computed
values, not against einc)."""
from __future__ import annotations

import numpy as np
import pytest

from fuzz.mutants.mutate import tokens
from fuzz.programs.expressions import named
from fuzz.programs.meaning import Fragile, Invalid, evaluate
from fuzz.programs.render import render_program
from fuzz.programs.compare import disagreement
from fuzz.programs.structure import (
    Binary, Block, Bound, Call, Cast, Clause, Define, Derivative, Function, Group, IfElse, Index, Input, Lit,
    Program, Range, Read, Reduce, Slot, Unary, Var, Where, Whole, widens_an_approximation)
from fuzz.programs.wellformed import depends_on, wholes_are_arrays

I = Index("i")


def ranged(var: str, lo: int, hi: int) -> Slot:
    return Slot(var, Bound(lo), Bound(hi))


def point(p: int) -> Slot:
    return Slot(None, Bound(p), Bound(p + 1))


def program(items, inputs=()) -> Program:
    names = [m.name for item in items for m in (item.members if isinstance(item, Group) else (item,))]
    return Program(tuple(inputs), tuple(items), (), tuple(names))


def meaning(prog: Program, **inputs) -> dict:
    return {name: pair.ex for name, pair in evaluate(prog, inputs).items()}


def test_integer_division_truncates_and_the_remainder_takes_the_dividends_sign():
    x = Input("x", "i32", (Bound(4),))
    read = Read("x", (I,), "i32")
    prog = program([Define("q", "i32", (Clause((ranged("i", 0, 4),), Binary("/", read, Lit(3, "i32"), "i32")),)),
                    Define("r", "i32", (Clause((ranged("i", 0, 4),), Binary("%", read, Lit(-3, "i32"), "i32")),))],
                   [x])
    out = meaning(prog, x=np.array([7, -7, 2, -2], np.int32))
    np.testing.assert_array_equal(out["q"], [2, -2, 0, 0])
    np.testing.assert_array_equal(out["r"], [1, -1, 2, -2])
    assert "-3" in render_program(prog)


def test_piecewise_points_win_in_order_and_gaps_are_zero():
    prog = program([Define("u", "f32", (
        Clause((point(0),), Lit(1.5, "f32")),
        Clause((ranged("i", 2, 5),), Unary("-", Lit(2.0, "f32"), "f32")),
        Clause((point(3),), Lit(9.0, "f32"))))])
    np.testing.assert_array_equal(meaning(prog)["u"], [1.5, 0.0, -2.0, 9.0, -2.0])


def test_a_guarded_out_point_of_a_definition_is_zero_and_its_read_is_not_checked():
    x = Input("x", "f32", (Bound(3),))
    guard = Binary(">=", I, Lit(1, "i32"), "bool")
    shifted = Read("x", (Binary("-", I, Lit(1, "i32"), "i32"),), "f32")
    prog = program([Define("y", "f32", (Clause((ranged("i", 0, 3),), shifted, (Where(None, guard),)),))], [x])
    np.testing.assert_array_equal(meaning(prog, x=np.array([1, 2, 3], np.float32))["y"], [0, 1, 2])
    unguarded = program([Define("y", "f32", (Clause((ranged("i", 0, 3),), shifted),))], [x])
    with pytest.raises(Invalid):
        meaning(unguarded, x=np.array([1, 2, 3], np.float32))


def test_an_if_evaluates_only_the_branch_taken():
    x = Input("x", "f32", (Bound(3),))
    body = IfElse(Binary(">=", I, Lit(1, "i32"), "bool"),
                  Read("x", (Binary("-", I, Lit(1, "i32"), "i32"),), "f32"), Lit(0.5, "f32"), "f32")
    prog = program([Define("y", "f32", (Clause((ranged("i", 0, 3),), body),))], [x])
    np.testing.assert_array_equal(meaning(prog, x=np.array([1, 2, 3], np.float32))["y"], [0.5, 1, 2])


def test_reductions_over_ranges_that_depend_on_the_outer_index():
    x = Input("x", "i32", (Bound(4),))
    k = Range("k", Bound(0), Bound(1, index="i"))
    prefix = Reduce("sum", (k,), Read("x", (Index("k"),), "i32"), None, "i32")
    suffix = Reduce("sum", (Range("k", Bound(0, index="i"), Bound(4)),), Read("x", (Index("k"),), "i32"),
                    None, "i32")
    prog = program([Define("p", "i32", (Clause((ranged("i", 0, 4),), prefix),)),
                    Define("s", "i32", (Clause((ranged("i", 0, 4),), suffix),))], [x])
    out = meaning(prog, x=np.array([1, 2, 3, 4], np.int32))
    np.testing.assert_array_equal(out["p"], [1, 3, 6, 10])
    np.testing.assert_array_equal(out["s"], [10, 9, 7, 4])


def test_a_recurrence_group_runs_step_by_step_in_its_order():
    t = Index("t")
    x_prev = Read("x", (Binary("-", t, Lit(1, "i32"), "i32"),), "f32")
    x = Define("x", "f32", (Clause((point(0),), Lit(1.0, "f32")),
                            Clause((ranged("t", 1, 4),), Binary("+", Read("v", (t,), "f32"), x_prev, "f32"))))
    v = Define("v", "f32", (Clause((ranged("t", 1, 4),), Binary("*", Lit(0.5, "f32"), x_prev, "f32")),))
    prog = program([Group((x, v), ("v", "x"), (("x", 0), ("x", 1), ("v", 0)))])
    out = meaning(prog)
    np.testing.assert_array_equal(out["x"], [1.0, 1.5, 2.25, 3.375])
    np.testing.assert_array_equal(out["v"], [0.0, 0.5, 0.75, 1.125])


def test_a_comparison_too_close_to_call_is_fragile():
    x = Input("x", "f32", ())
    close = Binary("<", Binary("*", Read("x", (), "f32"), Lit(3.0, "f32"), "f32"), Lit(0.3, "f32"), "bool")
    prog = program([Define("b", "bool", (Clause((), close),))], [x])
    assert meaning(prog, x=np.float32(0.5))["b"] == np.False_
    with pytest.raises(Fragile):
        meaning(prog, x=np.float32(0.1))


def test_derivatives_are_central_differences_of_the_wide_meaning():
    w = Input("w", "f64", (Bound(2),))
    square = Binary("*", Read("w", (I,), "f64"), Read("w", (I,), "f64"), "f64")
    total = Reduce("sum", (Range("i", Bound(0), Bound(2)),), square, None, "f64")
    prog = program([Define("loss", "f64", (Clause((), total),)), Derivative("g", "loss", "w", "f64")], [w])
    np.testing.assert_allclose(meaning(prog, w=np.array([0.5, -1.5]))["g"], [1.0, -3.0], rtol=1e-9)


def test_rendering_uses_the_fewest_parentheses_the_grammar_needs():
    x = Input("x", "f32", ())
    a, b = Read("x", (), "f32"), Lit(2.0, "f32")
    expr = Binary("*", Binary("-", a, b, "f32"), Unary("-", Binary("**", a, Lit(2, "i32"), "f32"), "f32"), "f32")
    text = render_program(program([Define("y", "f32", (Clause((), expr),))], [x]))
    assert "let y = (x - 2.0) * -x ** 2;" in text


def test_the_mutation_tokenizer_gives_the_text_back():
    text = 'let y[i in 0..=N] = x[i] ** 2.5e-3 + "s{x}" // c\n/* b */ @f |> g;\n'
    assert "".join(t for _, t in tokens(text)) == text
    assert ("operator", "..=") in tokens(text) and ("number", "2.5e-3") in tokens(text)


def test_an_elementwise_statement_depends_on_an_array_only_through_parameters_the_body_uses():
    # einc specializes a generic body for its arguments: `f(x)` with `fn f(a, b) { 3 }` is the
    # scalar 3, so a statement `let w = f(1, x);` is no array unless another term reads one
    x = Input("x", "i32", (Bound(3),))
    constant = Function("f", (("a", "i32"), ("b", "i32")), False, Lit(3, "i32"), "i32")
    plus_one = Binary("+", Var("b", "i32"), Lit(1, "i32"), "i32")
    second = Function("g", (("a", "i32"), ("b", "i32")), False, plus_one, "i32")
    functions = {fn.name: fn for fn in (constant, second)}
    call = Call("f", (Lit(1, "i32"), Read("x", (), "i32")), "i32")
    assert not depends_on(call, {"x"}, functions)
    assert depends_on(Call("g", (Lit(1, "i32"), Read("x", (), "i32")), "i32"), {"x"}, functions)
    assert not depends_on(Call("g", (Read("x", (), "i32"), Lit(1, "i32")), "i32"), {"x"}, functions)
    assert depends_on(Block((("v", Read("x", (), "i32")),), Var("v", "i32"), "i32"), {"x"}, functions)
    whole = Whole("w", "i32", (Bound(3),), call)
    assert not wholes_are_arrays(Program((x,), (constant, whole), (), ("w",)))


def test_a_bare_literal_a_name_carries_is_written_with_its_type():
    # einc types a name bound to an untyped literal where it is used, `as` included:
    # `{ let v = 0.3; v } as f64` is the f64 0.3, so the generator writes `0.3f32` there
    assert named(Lit(0.3, "f32")) == Lit(0.3, "f32", suffix=True)
    assert named(Lit(True, "bool")) == Lit(True, "bool")
    assert named(Read("x", (), "f32")) == Read("x", (), "f32")


def test_an_f64_value_from_an_f32_cosine_is_held_to_f32_tolerance():
    # NumPy's f32 cos(2) is -0.4161468, IREE's -0.41614679, the true value -0.41614684: an f64
    # result built on it can differ by an f32 ulp without any bug
    t = Cast(Index("t"), "f32")
    widened = Cast(Call("cos", (t,), "f32"), "f64")
    prog = program([Define("c", "f64", (Clause((ranged("t", 0, 3),), widened),))])
    assert widens_an_approximation(prog)
    assert not widens_an_approximation(program([Define("c", "f64", (Clause((ranged("t", 0, 3),),
                                                                            Cast(t, "f64")),))]))
    want = evaluate(prog, {})["c"]
    one_ulp_off = want.ex + np.array([6e-8, 0.0, 0.0])     # at cos(0) = 1, where NumPy is exact
    assert "allowed error" in disagreement(one_ulp_off, want)
    assert disagreement(one_ulp_off, want, f32_inside=True) is None
    assert "allowed error" in disagreement(want.ex + 1e-3, want, f32_inside=True)



def test_a_long_chain_renders_flat_and_means_its_sum_left_to_right():
    x = Input("x", "f32", (Bound(3),))
    signs = ["+" if k % 3 else "-" for k in range(1, 150)]
    body = Read("x", (I,), "f32")
    for k, sign in enumerate(signs):
        body = Binary(sign, body, Read("x", (Lit((k + 1) % 3, "i32"),), "f32"), "f32")
    prog = program([Define("y", "f32", (Clause((ranged("i", 0, 3),), body),))], [x])
    assert "(" not in render_program(prog).split("=", 1)[1]       # one flat chain of 150 operands
    values = np.array([0.5, -1.25, 2.0], np.float32)
    want = values.copy()
    for k, sign in enumerate(signs):
        want = want + values[(k + 1) % 3] if sign == "+" else want - values[(k + 1) % 3]
    np.testing.assert_array_equal(meaning(prog, x=values)["y"], want)


def test_the_generator_makes_long_chains():
    from fuzz.programs.generate import generate_case

    def longest_chain(node) -> int:
        if not isinstance(node, Binary) or node.op not in "+-":
            return 0
        return 1 + longest_chain(node.left)

    def chains(value):
        if isinstance(value, Binary):
            yield longest_chain(value)
        if isinstance(value, (list, tuple)):
            for v in value:
                yield from chains(v)
        elif hasattr(value, "__dataclass_fields__"):
            for f in value.__dataclass_fields__:
                yield from chains(getattr(value, f))

    longest = max(max(chains(generate_case(5, k).program), default=0) for k in range(60))
    assert longest >= 59
