"""Program-level lowering: piecewise definitions, stacks, host scalars, effects, signature, targets."""
import json

import numpy as np
import pytest
from iree.compiler import ir

from einc import host_cpu
from einc.diagnostics import CompileError
from einc.ir.nodes import Assert, Clause, Generic, Piecewise, Print, Reduce, Size, Stack
from einc.ir.types import Lin
from einc.mlir import lower_program, lower_to_text
from einc.target import get
from lowering_harness import (compile_program, Compiled, const, dt, op, program, read, ref, run,
                              scalar_input, tensor_input, var)

rng = np.random.default_rng(1)


def test_piecewise_with_literal_points_and_overlapping_clauses():
    # y[i] = x[i] for i in 0..4; y[2] = 100; y[i] = -1 for i in 3..5  (shape [6], later clauses win)
    syms = {}
    x = tensor_input("x", 0, "f32", [6], syms)
    i, p, j = var("i", 4), var("p", 1, lo=2), var("j", 2, lo=3)
    clauses = (Clause((Lin(0),), Generic((i,), read(x, ref(i)))),
               Clause((Lin(2),), Generic((p,), const(100.0))),
               Clause((Lin(3),), Generic((j,), const(-1.0))))
    y = Piecewise(dt("f32"), (Lin(6),), clauses)
    data = rng.random(6, np.float32)
    (got,) = run(program([x], [("y", y)], syms), data)
    np.testing.assert_array_equal(got, np.array([data[0], data[1], 100, -1, -1, 0], np.float32))


def test_piecewise_with_dynamic_offsets():
    # y has shape [N + 1]: y[0] = 1, y[i + 1] = x[i]
    syms = {}
    x = tensor_input("x", 0, "f32", ["N"], syms)
    n = x.shape[0]
    head, tail = var("p", 1), var("i", n, lo=1)
    shifted = read(x, op("sub", ref(tail), const(1, "i32")))
    y = Piecewise(dt("f32"), (n + 1,), (Clause((Lin(0),), Generic((head,), const(1.0))),
                                      Clause((Lin(1),), Generic((tail,), shifted))))
    data = rng.random(4, np.float32)
    (got,) = run(program([x], [("y", y)], syms), data)
    np.testing.assert_array_equal(got, np.concatenate([[1], data]).astype(np.float32))


def test_host_scalars_and_device_scalars():
    # s = a * 2 + b on the host; m = sum(x) / N stays a 0-d tensor on the device; shape(x) stacks sizes
    syms = {}
    a, b = scalar_input("a", 0, "f32"), scalar_input("b", 1, "i32")
    x = tensor_input("x", 2, "f32", ["N"], syms)
    s = op("add", op("mul", a, const(2.0)), op("cast", b, dtype="f32"))
    k = var("k", x.shape[0])
    mean = op("div", Reduce("sum", (k,), read(x, ref(k))), op("cast", Size(x.shape[0]), dtype="f32"))
    sizes = Stack((Size(x.shape[0]), Size(x.shape[0] + 1)))
    mixed = Stack((s, mean))
    p = program([a, b, x], [("s", s), ("m", mean), ("shape", sizes), ("mixed", mixed)], syms)
    text = lower_to_text(p, get("llvm-cpu"))
    assert "tensor.extract" not in text    # nothing is read back to the host
    data = rng.random(5, np.float32)
    got_s, got_m, got_shape, got_mixed = run(p, 1.5, 4, data)
    assert got_s.shape == () and got_s == 7.0
    np.testing.assert_allclose(got_m, data.mean(), rtol=1e-6)
    np.testing.assert_array_equal(got_shape, [5, 6])
    np.testing.assert_allclose(got_mixed, [7.0, data.mean()], rtol=1e-6)


def test_print_and_assert():
    syms = {}
    x = tensor_input("x", 0, "f32", ["N"], syms)
    t = scalar_input("t", 1, "f32")
    k = var("k", x.shape[0])
    total = Reduce("sum", (k,), read(x, ref(k)))
    parts = [{"text": "total = "}, {"arg": 0, "spec": ".2f"}, {"text": " t = "}, {"arg": 1, "spec": ""},
             {"text": "\n"}]
    effects = [Print(parts, (total, t)), Print([{"arg": 0, "spec": ""}], (x,)),
               Assert(op("gt", t, const(0.0), dtype="bool"), "assertion failed at a.ein:3:1: t > 0"),
               Assert(op("lt", total, const(100.0), dtype="bool"), "assertion failed at a.ein:4:1: small")]
    p = program([x, t], [("total", total)], syms, effects)
    text = lower_to_text(p, get("llvm-cpu"))
    assert 'flow.tensor.trace "einc.print.0"' in text and 'flow.tensor.trace "einc.print.1"' in text
    assert text.count("cf.assert") == 2
    module = Compiled(compile_program(p), "llvm-cpu")
    np.testing.assert_allclose(module.main(np.ones(3, np.float32), 1.0)[0], 3.0)
    with pytest.raises(RuntimeError, match="t > 0"):
        module.main(np.ones(3, np.float32), -1.0)
    with pytest.raises(RuntimeError, match="small"):
        module.main(np.full(3, 50, np.float32), 1.0)


def test_signature_reflection():
    syms = {}
    x = tensor_input("x", 0, "f32", ["N", 3, None], syms)
    n = scalar_input("n", 1, "i64")
    parts = [{"arg": 0, "spec": ""}]
    p = program([x, n], [("y", op("mul", n, n))], syms, [Print(parts, (n,))])
    module = lower_program(p, get("llvm-cpu"))
    main = module.body.operations[0]
    doc = json.loads(main.attributes["iree.reflection"]["einc.signature"].value)
    assert doc == {"version": 2, "source": "test.ein",
                   "inputs": [{"name": "x", "dtype": "float32", "dims": ["N", 3, None]},
                              {"name": "n", "dtype": "int64", "dims": []}],
                   "outputs": [{"name": "y", "dtype": "int64", "rank": 0}],
                   "prints": {"0": parts}, "asserts": {}, "assert_values": {},
                   "fixed_dims": {}, "sizes": {"N": {"input": "x", "axis": 0}, "null": {"input": "x", "axis": 2}},
                   "size_checks": [], "index_checks": []}
    assert "(tensor<?x3x?xf32>, i64) -> tensor<i64>" in str(main.attributes["function_type"])


@pytest.mark.parametrize("target", ["llvm-cpu", "llvm-cpu-generic", "vulkan-spirv"])
def test_the_lowering_stamps_the_target_once(target):
    # beside the signature, not inside it; code tuned to this CPU also records its extensions
    syms = {}
    x = tensor_input("x", 0, "f32", ["N"], syms)
    i = var("i", x.shape[0])
    module = lower_program(program([x], [("y", Generic((i,), read(x, ref(i))))], syms), get(target))
    main = module.body.operations[0]      # `module` kept: its operations die with it (a segfault)
    reflection = {a.name: a.attr.value for a in ir.DictAttr(main.attributes["iree.reflection"])}
    assert reflection["einc.target"] == target and "target" not in json.loads(reflection["einc.signature"])
    features = reflection.get("einc.cpu_features")
    assert features == (" ".join(host_cpu.isa_features()) if target == "llvm-cpu" else None)


def test_lowering_into_a_compiler_session_context():
    from iree.compiler.api import Session
    session = Session()
    session.context.load_all_available_dialects()
    syms = {}
    x = tensor_input("x", 0, "f32", ["N"], syms)
    i = var("i", x.shape[0])
    module = lower_program(program([x], [("y", Generic((i,), read(x, ref(i))))], syms), get("llvm-cpu"),
                           context=session.context)
    assert module.context is session.context


def test_f64_is_rejected_on_vulkan():
    syms = {}
    x = tensor_input("x", 0, "f64", ["N"], syms)
    i = var("i", x.shape[0])
    p = program([x], [("y", Generic((i,), read(x, ref(i))))], syms)
    with pytest.raises(CompileError, match="E011.*f64 is not supported on vulkan-spirv"):
        lower_program(p, get("vulkan-spirv"))
    lower_program(p, get("llvm-cpu"))


@pytest.mark.vulkan
def test_runs_on_vulkan():
    syms = {}
    a = tensor_input("A", 0, "f32", ["M", "K"], syms)
    b = tensor_input("B", 1, "f32", ["K", "N"], syms)
    i, j, k = var("i", a.shape[0]), var("j", b.shape[1]), var("k", a.shape[1])
    c = Generic((i, j), Reduce("sum", (k,), op("mul", read(a, ref(i), ref(k)), read(b, ref(k), ref(j)))))
    kk = var("kk", a.shape[1])
    row_max = Generic((i,), Reduce("max", (kk,), read(a, ref(i), ref(kk))))
    idx = tensor_input("idx", 2, "i32", ["G"], syms)
    g = var("g", idx.shape[0])
    gathered = Generic((g,), read(b, read(idx, ref(g)), const(0, "i32"), in_bounds=False))
    p = program([a, b, idx], [("C", c), ("rmax", row_max), ("gathered", gathered)], syms)
    xa, xb, ix = rng.random((5, 3), np.float32), rng.random((3, 4), np.float32), np.array([2, 0, 7], np.int32)
    got_c, got_max, got_g = run(p, xa, xb, ix, target="vulkan-spirv")
    np.testing.assert_allclose(got_c, xa @ xb, rtol=1e-5)
    np.testing.assert_allclose(got_max, xa.max(1), rtol=1e-6)
    np.testing.assert_array_equal(got_g, xb[np.clip(ix, 0, 2), 0])


def test_bool_scalars_and_bool_stacks_on_the_host():
    a = scalar_input("a", 0, "f32")
    flag = op("gt", a, const(0.0), dtype="bool")
    flags = Stack((flag, op("lt", a, const(1.0), dtype="bool")))
    got_flag, got_flags = run(program([a], [("flag", flag), ("flags", flags)], {}), 2.0)
    assert got_flag == True and list(got_flags) == [True, False]  # noqa: E712
