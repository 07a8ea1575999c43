"""std::ml::recurrent_ops (RNN, LSTM, GRU as recurrences over the sequence axis) and the LU
factorisation and solve of linalg_ops, against step-by-step NumPy references of the ONNX
equations (float64)."""
import numpy as np
import pytest

from stdlib_harness import close, rand, run_program

SOURCE = """
use std::ml::*;
let A: [f64; 4, 4];
let Ap: [f64; 4, 4];
let b: [f64; 4];
let Af: [f32; 3, 3];
let bf: [f32; 3];
let X: [f32; 5, 2, 3];
let W: [f32; 2, 4, 3];
let R: [f32; 2, 4, 4];
let B: [f32; 2, 8];
let h0: [f32; 2, 2, 4];
let Xd: [f64; 4, 2, 2];
let Wd: [f64; 1, 3, 2];
let Rd: [f64; 1, 3, 3];
let Bd: [f64; 1, 6];
let hd: [f64; 1, 2, 3];
let Wl: [f32; 2, 16, 3];
let Rl: [f32; 2, 16, 4];
let Bl: [f32; 2, 32];
let c0: [f32; 2, 2, 4];
let Wg: [f32; 2, 12, 3];
let Rg: [f32; 2, 12, 4];
let Bg: [f32; 2, 24];
let factors = lu(A);
let x = solve(A, b);
let xp = solve(Ap, b);
let xf = solve(Af, bf);
let rnn_f = rnn(X, W, R, B, h0, 4, "forward", "Tanh");
let rnn_r = rnn(X, W, R, B, h0, 4, "reverse", "Relu");
let rnn_b = rnn(X, W, R, B, h0, 4, "bidirectional", "Sigmoid");
let rnn_d = rnn(Xd, Wd, Rd, Bd, hd, 3, "forward", "Tanh");
let lstm_f = lstm(X, Wl, Rl, Bl, h0, c0, 4, "forward", 0.0);
let lstm_b = lstm(X, Wl, Rl, Bl, h0, c0, 4, "bidirectional", 0.5);
let gru_f = gru(X, Wg, Rg, Bg, h0, 4, "forward", 0);
let gru_r = gru(X, Wg, Rg, Bg, h0, 4, "reverse", 1);
"""

RNG = np.random.default_rng(7)
A4 = RNG.uniform(-1, 1, (4, 4)) + 4 * np.eye(4)        # diagonally dominant: no pivoting needed
A3 = (RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)).astype(np.float32)
SHAPES = dict(X=(5, 2, 3), W=(2, 4, 3), R=(2, 4, 4), B=(2, 8), h0=(2, 2, 4), Wl=(2, 16, 3), Rl=(2, 16, 4),
              Bl=(2, 32), c0=(2, 2, 4), Wg=(2, 12, 3), Rg=(2, 12, 4), Bg=(2, 24))
INPUTS = {k: rand(*s, seed=20 + n, lo=-0.8, hi=0.8) for n, (k, s) in enumerate(SHAPES.items())}
AP = np.array([[0.0, 2, 1, 3], [1, 1, 0, 2], [4, -1, 2, 0], [2, 3, 1, 1]])   # a zero first pivot
INPUTS.update(Ap=AP, A=A4, b=np.array([1.0, -2, 0.5, 3]), Af=A3, bf=np.array([1.0, 2.0, -1.0], np.float32),
              Xd=rand(4, 2, 2, dtype=np.float64, seed=40), Wd=rand(1, 3, 2, dtype=np.float64, seed=41),
              Rd=rand(1, 3, 3, dtype=np.float64, seed=42, lo=-0.5, hi=0.5),
              Bd=rand(1, 6, dtype=np.float64, seed=43), hd=rand(1, 2, 3, dtype=np.float64, seed=44))
F = {k: v.astype(np.float64) for k, v in INPUTS.items()}


@pytest.fixture(scope="module")
def out():
    return run_program(SOURCE, **INPUTS)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


ACT = {"Tanh": np.tanh, "Relu": lambda v: np.maximum(v, 0), "Sigmoid": sigmoid}


def rnn_cell(act):
    def cell(x, state, w, r, b):
        h = state[0]
        return (ACT[act](x @ w.T + h @ r.T + b[:len(w)] + b[len(w):]),)
    return cell


def lstm_cell(clip):
    def cell(x, state, w, r, b):
        h, c = state
        g = x @ w.T + h @ r.T + b[:len(w)] + b[len(w):]
        if clip > 0:
            g = np.clip(g, -clip, clip)
        i, o, f, cc = np.split(g, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(cc)
        return sigmoid(o) * np.tanh(c), c
    return cell


def gru_cell(linear_before_reset):
    def cell(x, state, w, r, b):
        h = state[0]
        wz, wr, wh = np.split(w, 3)
        rz, rr, rh = np.split(r, 3)
        wbz, wbr, wbh, rbz, rbr, rbh = np.split(b, 6)
        z = sigmoid(x @ wz.T + h @ rz.T + wbz + rbz)
        rg = sigmoid(x @ wr.T + h @ rr.T + wbr + rbr)
        if linear_before_reset:
            hc = np.tanh(x @ wh.T + rg * (h @ rh.T + rbh) + wbh)
        else:
            hc = np.tanh(x @ wh.T + (rg * h) @ rh.T + rbh + wbh)
        return ((1 - z) * hc + z * h,)
    return cell


def run_onnx(cell, x, w, r, b, init, direction):
    """ONNX outputs (Y, Y_h[, Y_c]) by an explicit loop over the sequence for each direction."""
    dirs = [False, True] if direction == "bidirectional" else [direction == "reverse"]
    ys, finals = [], []
    for d, rev in enumerate(dirs):
        state = tuple(s[d] for s in init)
        y = [None] * len(x)
        for t in (reversed(range(len(x))) if rev else range(len(x))):
            state = cell(x[t], state, w[d], r[d], b[d])
            y[t] = state[0]
        ys.append(np.stack(y))
        finals.append(state)
    return (np.stack(ys, 1),) + tuple(np.stack([f[k] for f in finals]) for k in range(len(init)))


def check(actual, expected, dtype=np.float32, **tol):
    for k, e in enumerate(expected):
        close(actual[k], e, dtype, **tol)


def outputs(out, name, n):
    return [out[f"{name}.{k}"] for k in range(n)]


def test_lu_factors_reconstruct_a(out):
    L, U = out["factors.0"], out["factors.1"]
    np.testing.assert_array_equal(np.triu(L, 1), 0)
    np.testing.assert_array_equal(np.diag(L), 1)
    np.testing.assert_array_equal(np.tril(U, -1), 0)
    close(L @ U, A4, np.float64)


def test_solve_f64_and_f32(out):
    close(out["x"], np.linalg.solve(A4, F["b"]), np.float64, rtol=1e-12)
    close(out["xp"], np.linalg.solve(AP, F["b"]), np.float64, rtol=1e-12)
    close(out["xf"], np.linalg.solve(A3.astype(np.float64), F["bf"]), rtol=1e-5)


@pytest.mark.parametrize("name, act, direction", [("rnn_f", "Tanh", "forward"), ("rnn_r", "Relu", "reverse"),
                                                  ("rnn_b", "Sigmoid", "bidirectional")])
def test_rnn_directions_and_activations(out, name, act, direction):
    nd = 2 if direction == "bidirectional" else 1
    ref = run_onnx(rnn_cell(act), F["X"], F["W"][:nd], F["R"][:nd], F["B"][:nd], (F["h0"][:nd],), direction)
    check(outputs(out, name, 2), ref, atol=1e-5)


def test_rnn_f64(out):
    ref = run_onnx(rnn_cell("Tanh"), F["Xd"], F["Wd"], F["Rd"], F["Bd"], (F["hd"],), "forward")
    check(outputs(out, "rnn_d", 2), ref, np.float64)


@pytest.mark.parametrize("name, clip, direction", [("lstm_f", 0.0, "forward"), ("lstm_b", 0.5, "bidirectional")])
def test_lstm(out, name, clip, direction):
    nd = 2 if direction == "bidirectional" else 1
    ref = run_onnx(lstm_cell(clip), F["X"], F["Wl"][:nd], F["Rl"][:nd], F["Bl"][:nd],
                   (F["h0"][:nd], F["c0"][:nd]), direction)
    check(outputs(out, name, 3), ref, atol=1e-5)


@pytest.mark.parametrize("name, lbr, direction", [("gru_f", 0, "forward"), ("gru_r", 1, "reverse")])
def test_gru(out, name, lbr, direction):
    ref = run_onnx(gru_cell(lbr), F["X"], F["Wg"][:1], F["Rg"][:1], F["Bg"][:1], (F["h0"][:1],), direction)
    check(outputs(out, name, 2), ref, atol=1e-5)
