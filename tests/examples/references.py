"""Independent NumPy references for the examples, one function per example, computing in the
precision the program does (float32 unless the program asks for f64). They never call einc;
`make golden` turns them into the goldens that test_goldens.py diffs the compiled programs
against.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from catalog import Reference, example, fmt, input_file

f32, f64, i32 = np.float32, np.float64, np.int32
PI32 = f32(np.pi)


def sigmoid(x):
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


# ------------------------------------------------------------------------------------ basics

@example("basics/arithmetic.ein", rtol=1e-6, atol=1e-12)
def arithmetic(_):
    count, ratio, precise = i32(17), f32(2.5), f64(2.5)
    quotient, remainder = i32(3), i32(-2)          # C-style: trunc toward zero, sign of dividend
    mean = (f32(count) + ratio) / f32(2)
    truncated, power = i32(3), i32(2 ** 9)
    hypotenuse = np.sqrt(f32(3) ** 2 + f32(4) ** 2)
    growth = (1 + 0.05 / 12) ** 120
    continuous = math.exp(0.5)
    circle_area = f32(np.pi * 1.5 ** 2)
    gap = abs(growth - continuous)
    out = dict(count=count, ratio=ratio, precise=precise, quotient=quotient, remainder=remainder,
               mean=mean, truncated=truncated, power=power, hypotenuse=hypotenuse,
               growth=f64(growth), continuous=f64(continuous), circle_area=circle_area, gap=f64(gap))
    return Reference(out, [
        f"17 / 5 = {quotient}, -17 % 5 = {remainder}, 3.9 as i32 = {truncated}",
        f"2 ** 3 ** 2 = {power}, hypotenuse of 3 and 4 = {fmt(hypotenuse)}",
        f"mean of {count} and {fmt(ratio)} = {mean:.2f}",
        f"10 years at 5%: monthly {growth:.6f}, continuous {continuous:.6f}, gap {gap:.2e}",
        f"area of a circle of radius 1.5 = {circle_area:.4f}",
    ])


@example("basics/arrays.ein", rtol=1e-6)
def arrays(_):
    A = np.array([[2, -1, 0], [-1, 2, -1], [0, -1, 2]], f32)
    x = np.array([1, 2, 3], f32)
    y = A @ x
    G = A.T @ A
    energy, trace = x @ A @ x, np.trace(A)
    largest, symmetric = np.abs(A).max(), np.bool_((A == A.T).all())
    positive_sum = A[A > 0].sum()
    squares = np.arange(10, dtype=f32) ** 2
    moving = np.convolve(squares, np.ones(3, f32), "valid")
    prefix = np.cumsum(squares)
    scaled = f32(0.5) * (x + y)
    out = dict(A=A, x=x, y=y, At=A.T.copy(), G=G, energy=energy, trace=trace, largest=largest,
               symmetric=symmetric, positive_sum=positive_sum, squares=squares, moving=moving,
               prefix=prefix, scaled=scaled)
    return Reference(out, [
        f"A x = {fmt(y)}",
        f"x^T A x = {fmt(energy)}, trace {fmt(trace)}, max |A| {fmt(largest)}, symmetric {fmt(symmetric)}",
        f"A^T A = {fmt(G)}",
        f"sum of positive entries {fmt(positive_sum)}",
        f"moving sums of squares {fmt(moving)}",
        f"prefix sums {fmt(prefix)}",
        f"(x + A x) / 2 = {fmt(scaled, '.2f')}",
    ])


@example("basics/functions.ein", rtol=2e-6, atol=1e-7)
def functions(_):
    def softplus(x):
        return np.where(x > 20, x, np.log(1 + np.exp(x)))
    grid = np.arange(-3, 4).astype(f32)
    activations, smooth = sigmoid(grid), softplus(grid).astype(f32)
    wide = f64(math.log1p(math.exp(2.0)))
    mean = grid.sum() / f32(7)
    spread = np.sqrt(((grid - mean) ** 2).sum() / f32(7))
    squashed = sigmoid(grid * f32(3))
    days = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], i32)
    out = dict(grid=grid, activations=activations, smooth=smooth, wide=wide, mean=mean,
               spread=spread, scale=f32(3), squashed=squashed, days=days, year=days.sum(dtype=i32),
               months=np.arange(1, 13, dtype=i32), days_again=days)
    return Reference(out, [
        "hypot(3, 4) = 5.0",
        f"sigmoid on -3..3: {fmt(activations, '.4f')}",
        f"softplus on -3..3: {fmt(smooth, '.4f')}",
        f"softplus(2) in f64 = {wide:.12f}",
        f"mean {fmt(mean)}, standard deviation {spread:.6f}",
        f"sigmoid(3 x): {fmt(squashed, '.4f')}",
        f"days per month {fmt(days)}, {days.sum()} in a year",
    ])


@example("basics/modules/main.ein", rtol=1e-6, atol=1e-6)
def modules(_):
    def area(p):
        q = np.roll(p, -1, axis=0)
        return f32(0.5) * (p[:, 0] * q[:, 1] - p[:, 1] * q[:, 0]).sum()

    def perimeter(p):
        return np.sqrt(((np.roll(p, -1, axis=0) - p) ** 2).sum(axis=1)).sum()
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], f32)
    angle = f32(2 * np.pi) * np.arange(6, dtype=f32) / f32(6)
    hexagon = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    out = dict(square=square, hexagon=hexagon, square_area=area(square),
               hexagon_area=area(hexagon), hexagon_perimeter=perimeter(hexagon))
    return Reference(out, [
        f"square: area {fmt(area(square))}, perimeter {fmt(perimeter(square))}",
        f"hexagon: area {area(hexagon):.6f} (exact {1.5 * math.sqrt(3):.6f}), "
        f"perimeter {perimeter(hexagon):.6f}",
    ])


@input_file("basics/comprehensions_readings.npy")
def comprehensions_readings():
    return np.array([12.5, -3.0, 47.25, 101.5, 88.0, 0.0, 63.5, 250.0, 99.75, 5.5], f32)


@example("basics/comprehensions.ein", inputs={"readings": "comprehensions_readings.npy"}, rtol=1e-6,
         vulkan=True)
def comprehensions(inputs):
    primes = np.array([n for n in range(2, 40) if all(n % d for d in range(2, n))], i32)
    grid = np.array([r * 10 + c for r in range(3) for c in range(4)], i32)
    odd_primes = np.array([p for p in range(20) if p in primes and p % 2 == 1], i32)
    pairs = np.array([(a, b) for a in range(1, 6) for b in range(a, 6) if (a + b) % 4 == 0], i32)
    pair_sums = pairs.sum(axis=1, dtype=i32)
    pair_products = pairs.prod(axis=1, dtype=i32)
    powers = np.array([[n, n ** 2, n ** 3] for n in range(1, 5)], i32)
    triangles = np.array([[3, 4, 5], [5, 12, 13], [8, 15, 17]], i32)
    perimeters = triangles.sum(axis=1, dtype=i32)
    staircase = np.arange(12, dtype=i32).reshape(3, 4)
    readings = inputs["readings"]
    kept = (readings >= 0) & (readings <= 100)
    valid = readings[kept]
    count = i32(len(valid))
    mean = valid.sum(dtype=f32) / f32(count)
    rejected = np.flatnonzero(~kept).astype(i32)
    out = dict(primes=primes, grid=grid, odd_primes=odd_primes, pairs=pairs, pair_sums=pair_sums,
               pair_products=pair_products,
               powers=powers, triangles=triangles, perimeters=perimeters, staircase=staircase,
               valid=valid, count=count, mean=mean, centred=valid - mean, rejected=rejected,
               scaled=readings * f32(0.01))
    return Reference(out, [
        f"primes below 40: {fmt(primes)}",
        f"grid: {fmt(grid)}",
        f"odd primes below 20: {fmt(odd_primes)}",
        f"pairs summing to a multiple of 4: {fmt(pairs)}",
        f"their sums: {fmt(pair_sums)}, products: {fmt(pair_products)}",
        f"perimeters of right triangles: {fmt(perimeters)}",
        "",
        f"{count} valid readings of {len(readings)} with mean {mean:.3f}; rejected positions {fmt(rejected)}",
    ])


@input_file("basics/strings_weights_3.npy")
def strings_weights():
    return np.array([0.5, 1.5, 2.0, 4.0], f32)


@example("basics/strings.ein", rtol=1e-6)
def strings(_):
    name = "einlang"
    greeting = "hello, " + name + "!"
    vowels = np.array([c for c in name if c in "aeiou"])
    words = np.array(["tensor", "index", "sum", "recurrence", "derivative"])
    lengths = np.array([len(w) for w in words], i32)
    long_words = np.array([w for w in words if len(w) > 5])
    initials = np.array([w[0] for w in words])
    doubled, halved = f32(1.25) * f32(2), f32(1.25) * f32(0.5)
    run, rate = i32(3), f32(0.125)
    weights = strings_weights()
    total = weights.sum(dtype=f32) * rate
    first = min(words[0], words[1])
    out = dict(lengths=lengths, longest=lengths.max(), doubled=doubled, halved=halved, run=run,
               rate=rate, weights=weights, total=total)
    return Reference(out, [
        f"{greeting} has {len(greeting)} characters; the third is {greeting[2]}",
        f"vowels of {name}: {vowels}",
        f"words {words} have lengths {fmt(lengths)} and initials {initials}",
        f"longer than five: {long_words} longest {lengths.max()} first {first}",
        f"{fmt('sum' in words)} {fmt('product' in words)} {fmt('curr' in 'recurrence')} {fmt(name == 'einlang')}",
        f"run {run} at rate {rate:.3f} from strings_weights_{run}.npy gives {fmt(total)}",
        f"doubled {fmt(doubled)}, halved {fmt(halved)}",
    ])


@input_file("basics/matmul_A.npy")
def matmul_a():
    return np.random.default_rng(1).standard_normal((5, 7)).astype(f32)


@input_file("basics/matmul_B.npy")
def matmul_b():
    return np.random.default_rng(2).standard_normal((7, 3)).astype(f32)


@example("basics/matmul.ein", inputs={"A": "matmul_A.npy", "B": "matmul_B.npy"}, rtol=1e-5, atol=1e-5,
         vulkan=True)
def matmul(inputs):
    A, B = (inputs[k].astype(f64) for k in "AB")
    C = A @ B
    norms = np.sqrt((C * C).sum(axis=1))
    return Reference(dict(C=C.astype(f32), row_norms=norms.astype(f32)), [
        f"C is {C.shape[0]} x {C.shape[1]}; largest row norm {norms.max():.4f}"])


@input_file("basics/conv2d_X.npy")
def conv2d_x():
    return np.random.default_rng(3).standard_normal((2, 3, 10, 10)).astype(f32)


@input_file("basics/conv2d_K.npy")
def conv2d_k():
    return np.random.default_rng(4).standard_normal((4, 3, 3, 3)).astype(f32)


@example("basics/conv2d.ein", inputs={"X": "conv2d_X.npy", "K": "conv2d_K.npy"}, rtol=1e-5, atol=1e-5)
def conv2d(inputs):
    X, K = inputs["X"].astype(f64), inputs["K"].astype(f64)
    n, c, h, w = X.shape
    kh, kw = K.shape[2:]
    Y = np.zeros((n, K.shape[0], h - kh + 1, w - kw + 1))
    for r in range(kh):
        for s in range(kw):
            Y += np.einsum("nchw,oc->nohw", X[:, :, r:r + h - kh + 1, s:s + w - kw + 1], K[:, :, r, s])
    A = np.maximum(Y, 0)
    ph, pw = A.shape[2] // 2, A.shape[3] // 2
    P = A[:, :, :2 * ph, :2 * pw].reshape(n, -1, ph, 2, pw, 2).max(axis=(3, 5))
    return Reference({k: v.astype(f32) for k, v in dict(Y=Y, A=A, P=P).items()})



@input_file("basics/patterns_marks.npy")
def patterns_marks():
    return np.array([99, 76, 52, -3, 64, 100], i32)


@example("basics/patterns.ein", inputs={"marks": "patterns_marks.npy"}, vulkan=True)
def patterns(inputs):
    def grade(s):
        if s == 100:
            return 6
        if 90 <= s <= 99:
            return 5
        if 70 <= s < 90:
            return 4 if s % 10 >= 5 else 3
        return 2 if s in (50, 51, 52) else -1 if s < 0 else 1

    def quadrant(x, y):
        return {(True, True): 1, (False, True): 2, (False, False): 3, (True, False): 4}[(x >= 0, y >= 0)]
    marks = inputs["marks"]
    scores = np.array([100, 95, 87, 73, 51, 30, -4], i32)
    grades = np.array([grade(s) for s in scores], i32)
    mark_grades = np.array([grade(s) for s in marks], i32)
    signs = np.sign(scores - 60).astype(i32)
    xs, ys = np.array([3, -1, -5, 2], i32), np.array([4, 2, -5, -7], i32)
    quadrants = np.array([quadrant(x, y) for x, y in zip(xs, ys)], i32)
    flags = (scores > 60).astype(i32)
    primes = np.array([2, 3, 5, 7, 11], i32)
    ends = i32(primes[0] * 100 + primes[-1])
    head_and_rest = i32(primes[0] * 1000 + primes[1:].sum())
    rim = i32(marks[0] - marks[-1])
    pair = primes[4] if primes[1] == 3 else primes[1]
    out = dict(mark_grades=mark_grades, scores=scores, grades=grades, signs=signs, xs=xs,
               ys=ys, quadrants=quadrants, flags=flags, primes=primes, ends=ends,
               head_and_rest=head_and_rest, rim=rim, pair=i32(pair))
    return Reference(out, [
        f"grades {fmt(grades)}, of the marks {fmt(mark_grades)}",
        f"signs around 60 {fmt(signs)}, passed {fmt(flags)}",
        f"quadrants {fmt(quadrants)}",
        f"first and last {ends}, head and sum of the rest {head_and_rest}, pair {pair}, "
        f"rim of the marks {rim}",
    ])


@input_file("basics/pipelines_readings.npy")
def pipelines_readings():
    return np.array([[0.5, 2.5, -1.0, 3.0], [4.0, 1.5, 2.25, -0.5], [-2.0, 0.0, 1.0, 2.5]], f32)


@example("basics/pipelines.ein", inputs={"readings": "pipelines_readings.npy"}, saves={"clipped.npy": "clipped"},
         rtol=2e-6, vulkan=True)
def pipelines(inputs):
    readings = inputs["readings"]
    halved = readings * f32(0.5)
    chained = f32(3) ** 2 + f32(1)
    odd_squares = np.array([k * k + 1 for k in range(8) if (k * k + 1) % 2 == 0], i32)
    on_line = f32(2 * 1.5 + 0.5)                       # slope 2, offset 0.5
    total, highest, lowest = readings.sum(dtype=f32), readings.max(), readings.min()
    clipped = np.maximum(readings, f32(0))
    above = (readings > 2).sum(axis=1).astype(i32)
    m = total / f32(12)
    cube_slope = f32(3) * m * m                        # d(m^3)/dm
    inverse_slope = f32(1) / (f32(1) + f32(2) * m)     # 1 / (d(m + m^2)/dm)
    out = dict(doubled=i32(10), halved=halved, chained=chained, odd_squares=odd_squares,
               on_line=on_line, total=total, highest=highest, lowest=lowest, clipped=clipped, above=above,
               m=m, cube_slope=cube_slope, inverse_slope=inverse_slope)
    return Reference(out, [
        f"doubled 10, 3 squared plus one {fmt(chained)}, the second row halved {fmt(halved[1])}",
        f"odd squares plus one {fmt(odd_squares)}, line(1.5) = {fmt(on_line)}",
        f"total {fmt(total)}, highest {fmt(highest)}, lowest {fmt(lowest)}, above 2 per row {fmt(above)}",
        f"mean {m:.4f}: d(m^3)/dm = {cube_slope:.4f}, dm/d(m + m^2) = {inverse_slope:.4f}",
    ])


@input_file("basics/half_precision_readings.npy")
def half_precision_readings():
    return np.round(np.random.default_rng(23).uniform(-4, 12, (4, 6)), 2).astype(np.float16)


# f16 and bf16 are llvm-cpu only: vulkan-spirv refuses them (tests/examples/test_goldens.py checks
# that it does). rtol: one f16 ulp (2^-10 relative) for an operation IREE rounds the other way.
@example("basics/half_precision.ein", inputs={"readings": "half_precision_readings.npy"}, rtol=1e-3)
def half_precision(inputs):
    f16 = np.float16
    bf16 = ml_dtypes.bfloat16
    readings = inputs["readings"]
    scaled = readings * f16(0.5) + f16(1.0)            # NumPy float16: each operation in f32, rounded once
    row_mean = scaled.sum(axis=1) / f16(6)            # NumPy's float16 sum: in f32, rounded once
    row_mean_f32 = scaled.astype(f32).sum(axis=1) / f32(6)
    rounding = row_mean.astype(f32) - row_mean_f32
    rms = np.sqrt((readings * readings).sum() / f16(24))
    big = f16(1000.7)
    wide = f32(bf16(big))
    coarse = row_mean.astype(bf16).astype(f32)
    out = dict(scaled=scaled, row_mean=row_mean, row_mean_f32=row_mean_f32,
               rounding=rounding, rms=rms, big=big, wide=wide, coarse=coarse)
    return Reference(out, [f"row means (f16): {fmt(row_mean)}",
                           f"rms {fmt(rms)}, 1000.7 in f16 {fmt(big)}, in bf16 {fmt(wide)}"])


# ------------------------------------------------------------------------------- recurrences

@example("recurrences/fibonacci.ein", rtol=1e-12, atol=1e-15)
def fibonacci(_):
    fib = [0, 1]
    while len(fib) < 47:
        fib.append(fib[-1] + fib[-2])
    fib = np.array(fib, i32)
    ratio = np.zeros(47)
    ratio[2:] = fib[2:].astype(f64) / fib[1:-1]
    golden = (1 + math.sqrt(5)) / 2
    error = np.zeros(47)
    error[2:] = ratio[2:] - golden
    partial = fib[:45].sum(dtype=i32)
    return Reference(dict(fib=fib, ratio=ratio, golden=f64(golden), error=error, partial=partial,
                          first=fib[:12]), [
        f"first terms {fmt(fib[:12])}",
        f"fib[46] = {fib[46]}",
        f"sum of fib[0..45] = {partial} = fib[46] - 1",
        f"fib[46] / fib[45] = {ratio[46]:.15f}, golden ratio {golden:.15f}",
        f"ratio error after 10, 20, 30 terms: {error[10]:.3e} {error[20]:.3e} {error[30]:.3e}",
    ])


@example("recurrences/logistic_map.ein", outputs=("attractor", "period"), rtol=1e-4, atol=1e-5)
def logistic_map(_):
    R, T = 64, 2000
    rate = f32(2.8) + f32(0.75) * np.arange(R, dtype=f32) / f32(R - 1)
    x = np.empty((T, R), f32)
    x[0] = 0.5
    for t in range(1, T):
        x[t] = rate * x[t - 1] * (f32(1) - x[t - 1])
    attractor = x[T - 8:].T.copy()

    def close(a, b):
        return (a - b) ** 2 < 1e-8
    period = np.select([close(x[-1], x[-2]), close(x[-1], x[-3]), close(x[-1], x[-5])], [1, 2, 4], 8)
    return Reference(dict(attractor=attractor, period=period.astype(i32)), [
        f"r = 2.90: {fmt(attractor[8], '.4f')}",
        f"r = 3.30: {fmt(attractor[42], '.4f')}",
        f"r = 3.50: {fmt(attractor[59], '.4f')}",
        f"periods: {fmt(period)}",
    ])


@example("recurrences/markov_chain.ein", rtol=1e-5, atol=1e-6, vulkan=True)
def markov_chain(_):
    P = np.array([[0.90, 0.07, 0.03], [0.40, 0.50, 0.10], [0.05, 0.10, 0.85]], f32)
    T = 60
    p = np.zeros((T, 3), f32)
    p[0, 1] = 1
    for t in range(1, T):
        p[t] = p[t - 1] @ P
    change = np.zeros(T, f32)
    change[1:] = f32(0.5) * np.abs(np.diff(p, axis=0)).sum(axis=1)
    residual = np.abs(p[-1] @ P - p[-1]).max()
    rows = np.bool_((np.abs(P.sum(axis=1) - 1) < 1e-6).all())
    return Reference(dict(P=P, T=i32(T), p=p, change=change, residual=residual, rows_sum_to_one=rows), [
        f"rows of P sum to one: {fmt(rows)}",
        f"after 1, 5, 20 months: {fmt(p[1], '.4f')} {fmt(p[5], '.4f')} {fmt(p[20], '.4f')}",
        f"stationary distribution {fmt(p[-1], '.5f')}; pi P = pi to 1e-6: {fmt(residual < 1e-6)}",
        f"total variation between steps 10 and 11: {change[11]:.3e}",
    ])


@example("recurrences/lstm.ein", outputs=("last", "norm"), rtol=1e-4, atol=1e-5)
def lstm(_):
    H, N, T = 16, 4, 50
    q, j, i = np.meshgrid(np.arange(4), np.arange(H), np.arange(H), indexing="ij")
    U = f32(0.3) * np.sin((q * H * H + j * H + i).astype(f32) * f32(0.37))
    t, n, q, i = np.meshgrid(np.arange(T), np.arange(N), np.arange(4), np.arange(H), indexing="ij")
    xp = np.cos(f32(0.2) * t.astype(f32) + f32(1.3) * n.astype(f32) + f32(0.7) * (q * H + i).astype(f32))
    h = np.zeros((N, H), f32)
    c = np.zeros((N, H), f32)
    for step in range(1, T):
        z = np.einsum("nj,qji->nqi", h, U) + xp[step]
        c = sigmoid(z[:, 1]) * c + sigmoid(z[:, 0]) * np.tanh(z[:, 2])
        h = sigmoid(z[:, 3]) * np.tanh(c)
    norm = np.sqrt((h * h).sum(axis=1))
    return Reference(dict(last=h, norm=norm), [
        f"h[T - 1] of sequence 0: {fmt(h[0], '.4f')}",
        f"norm of h[T - 1] per sequence: {fmt(norm, '.4f')}",
    ])


@example("recurrences/random_walk.ein", outputs=("mean", "msd", "farthest"), rtol=1e-6, vulkan=True)
def random_walk(_):
    W, T = 256, 401
    seed = 1 + 97 * np.arange(W, dtype=np.int64)
    position = np.zeros((T, W), np.int64)
    for t in range(1, T):
        seed = 75 * seed % 65537
        position[t] = position[t - 1] + np.where(seed > 32768, 1, -1)
    mean = (position.sum(axis=1) / W).astype(f32)
    msd = ((position ** 2).sum(axis=1) / W).astype(f32)
    farthest = i32(np.abs(position[-1]).max())
    return Reference(dict(mean=mean, msd=msd, farthest=farthest), [
        f"after 100, 200, 400 steps: mean {mean[100]:.3f} {mean[200]:.3f} {mean[400]:.3f}",
        f"mean squared displacement {msd[100]:.2f} {msd[200]:.2f} {msd[400]:.2f} (theory: t)",
        f"farthest walker after {T - 1} steps: {farthest}",
    ])


# -------------------------------------------------------------------------------------- ODEs

def rk4(field, state, h, steps):
    """Classical Runge-Kutta: `steps` steps of size h from `state` (a tuple of arrays or
    scalars); returns one array per state variable, the initial value first."""
    path = [state]
    for _ in range(steps):
        k1 = field(*state)
        k2 = field(*(s + h / 2 * k for s, k in zip(state, k1)))
        k3 = field(*(s + h / 2 * k for s, k in zip(state, k2)))
        k4 = field(*(s + h * k for s, k in zip(state, k3)))
        state = tuple(s + h / 6 * (a + 2 * b + 2 * c + d) for s, a, b, c, d in zip(state, k1, k2, k3, k4))
        path.append(state)
    return [np.array(v) for v in zip(*path)]


@example("ode/lorenz.ein", rtol=1e-7, atol=1e-7)
def lorenz(_):
    sigma, rho, beta, dt, N = 10.0, 28.0, 8.0 / 3.0, 0.005, 4001
    x, y, z = rk4(lambda x, y, z: (sigma * (y - x), x * (rho - z) - y, x * y - beta * z),
                  (1.0, 1.0, 1.0), dt, N - 1)
    switches = i32((x[1:] * x[:-1] < 0).sum())
    return Reference(dict(sigma=f64(sigma), rho=f64(rho), beta=f64(beta), dt=f64(dt), N=i32(N),
                          x=x, y=y, z=z, z_max=z.max(), switches=switches), [
        f"state at t = 20: ({x[-1]:.6f}, {y[-1]:.6f}, {z[-1]:.6f})",
        f"largest z {z.max():.4f}; x changed sign {switches} times",
    ])


@example("ode/sir.ein", rtol=1e-10, atol=1e-12)
def sir(_):
    beta, gamma, dt, N = 0.3, 0.1, 0.25, 641
    S, I, R = rk4(lambda s, i, r: (-beta * s * i, beta * s * i - gamma * i, gamma * i),
                  (0.999, 0.001, 0.0), dt, N - 1)
    peak = I.max()
    peak_day = np.argmax(I) * dt
    drift = np.abs(S + I + R - 1).max()
    return Reference(dict(beta=f64(beta), gamma=f64(gamma), dt=f64(dt), N=i32(N), S=S, I=I, R=R,
                          peak=peak, peak_day=f64(peak_day), drift=drift), [
        f"basic reproduction number R0 = {beta / gamma:.1f}",
        f"peak: {peak * 100:.2f}% infected on day {peak_day:.2f}",
        f"after 160 days: {S[-1] * 100:.2f}% never infected, {R[-1] * 100:.2f}% recovered",
        f"S + I + R = 1 to within {drift:.1e}",
    ])


@example("ode/fitzhugh_nagumo.ein", rtol=1e-4, atol=1e-4)
def fitzhugh_nagumo(_):
    a, b, eps, current, dt, N = f32(0.7), f32(0.8), f32(0.08), f32(0.5), f32(0.1), 2001
    v, w = rk4(lambda v, w: (v - v * v * v / f32(3) - w + current, eps * (v + a - b * w)),
               (f32(-1), f32(1)), dt, N - 1)
    spike = np.zeros(N, bool)
    spike[1:] = (v[:-1] < 1) & (v[1:] >= 1)
    times = np.flatnonzero(spike)
    period = f32(times[-1] - times[-2]) * dt
    return Reference(dict(a=a, b=b, eps=eps, current=current, dt=dt, N=i32(N), v=v.astype(f32),
                          w=w.astype(f32), spike=spike, spikes=i32(len(times)), last=i32(times[-1]),
                          before_last=i32(times[-2]), period=period), [
        f"{len(times)} spikes in 200 time units; period {period:.1f}",
        f"v ranges over [{v.min():.3f}, {v.max():.3f}]",
    ])


# -------------------------------------------------------------------------------------- PDEs

@example("pde/heat_1d.ein", outputs=("final", "heat", "max_error"), rtol=1e-4, atol=1e-5)
def heat_1d(_):
    M, T, D = 51, 501, f32(1)
    dx = f32(1) / f32(M - 1)
    dt = f32(0.4) * dx * dx / D
    lam = D * dt / (dx * dx)
    xs = np.arange(M, dtype=f32) * dx
    u = (np.sin(PI32 * xs) + f32(0.5) * np.sin(f32(3 * np.pi) * xs)).astype(f32)
    heat = [dx * u[1:-1].sum()]
    for _ in range(T - 1):
        interior = u[1:-1] + lam * (u[:-2] - f32(2) * u[1:-1] + u[2:])
        u = np.concatenate([[f32(0)], interior, [f32(0)]]).astype(f32)
        heat.append(dx * u[1:-1].sum())
    time = f32(T - 1) * dt
    exact = (np.exp(-D * PI32 * PI32 * time) * np.sin(PI32 * xs)
             + f32(0.5) * np.exp(f32(-9) * D * PI32 * PI32 * time) * np.sin(f32(3 * np.pi) * xs))
    max_error = np.abs(u - exact).max()
    heat = np.array(heat, f32)
    return Reference(dict(final=u, heat=heat, max_error=max_error), [
        f"time {time:.3f}: u(0.5) = {u[25]:.6f}, exact {exact[25]:.6f}, max error {max_error:.2e}",
        f"heat at steps 0, 100, 500: {heat[0]:.5f} {heat[100]:.5f} {heat[500]:.5f}",
    ])


@example("pde/advection_1d.ein", outputs=("upwind", "lax_wendroff", "mass"), rtol=1e-4, atol=1e-5)
def advection_1d(_):
    M, c, T = 100, f32(0.5), 201
    u0 = np.exp(-((np.arange(M, dtype=f32) - f32(30)) / f32(5)) ** 2)
    up, lw = u0.copy(), u0.copy()
    for _ in range(T - 1):
        up = up - c * (up - np.roll(up, 1))
        left, right = np.roll(lw, 1), np.roll(lw, -1)
        lw = lw - f32(0.5) * c * (right - left) + f32(0.5) * c * c * (right - f32(2) * lw + left)
    error_up, error_lw = np.abs(up - u0).max(), np.abs(lw - u0).max()
    mass = np.array([u0.sum(), up.sum(), lw.sum()], f32)
    return Reference(dict(upwind=up, lax_wendroff=lw, mass=mass), [
        f"after one turn: peak {u0.max():.4f} -> upwind {up.max():.4f}, Lax-Wendroff {lw.max():.4f}",
        f"max error: upwind {error_up:.4f}, Lax-Wendroff {error_lw:.4f}",
        f"mass (initial, upwind, Lax-Wendroff): {fmt(mass, '.4f')}",
    ])


@example("pde/wave_2d.ein", outputs=("snapshot", "energy"), rtol=1e-4, atol=2e-5, vulkan=True)
def wave_2d(_):
    M, T, c2 = 41, 121, f32(0.25)
    i, j = np.meshgrid(np.arange(M), np.arange(M), indexing="ij")
    u0 = np.exp(-((i - 20) ** 2 + (j - 20) ** 2).astype(f32) / f32(8))
    u0[[0, -1], :] = 0
    u0[:, [0, -1]] = 0

    def laplacian(u):
        out = np.zeros_like(u)
        out[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - f32(4) * u[1:-1, 1:-1]
        return out
    u = [u0, u0 + f32(0.5) * c2 * laplacian(u0)]
    for _ in range(2, T):
        nxt = f32(2) * u[-1] - u[-2] + c2 * laplacian(u[-1])
        nxt[[0, -1], :] = 0
        nxt[:, [0, -1]] = 0
        u.append(nxt)
    energy = np.zeros(T, f32)
    for t in range(1, T):
        a, b = u[t], u[t - 1]
        energy[t] = (((a - b) ** 2).sum()
                     + c2 * ((a[1:] - a[:-1]) * (b[1:] - b[:-1])).sum()
                     + c2 * ((a[:, 1:] - a[:, :-1]) * (b[:, 1:] - b[:, :-1])).sum())
    centre = [u[t][20, 20] for t in (0, 40, 80, 120)]
    return Reference(dict(snapshot=u[-1], energy=energy), [
        "centre displacement at steps 0, 40, 80, 120: " + " ".join(f"{v:.4f}" for v in centre),
        f"energy at steps 1, 60, 120: {energy[1]:.6f} {energy[60]:.6f} {energy[120]:.6f}",
    ])


# --------------------------------------------------------------------------------- filtering

@input_file("filters/kalman_measurements.npy")
def kalman_measurements():
    """80 noisy positions (sd 2 m) of an object moving at about 1.5 m/s with random acceleration."""
    rng = np.random.default_rng(2026)
    position = 5.0 + 1.5 * np.arange(80.0) + np.cumsum(np.cumsum(rng.normal(0, 0.1, 80)))
    return position + rng.normal(0, 2.0, 80)


@example("filters/kalman_filter.ein", inputs={"z": "kalman_measurements.npy"}, outputs=("x", "P"),
         rtol=1e-10, atol=1e-12)
def kalman_filter(inputs):
    z = inputs["z"]
    T, dt, q, r = len(z), 1.0, 0.01, 4.0
    F = np.array([[1, dt], [0, 1]])
    H = np.array([1.0, 0.0])
    Q = q * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
    x, P = np.zeros((T, 2)), np.zeros((T, 2, 2))
    x[0] = [z[0], 0]
    P[0] = np.diag([r, 100.0])
    for t in range(1, T):
        xp, Pp = F @ x[t - 1], F @ P[t - 1] @ F.T + Q
        K = Pp @ H / (H @ Pp @ H + r)
        x[t] = xp + K * (z[t] - H @ xp)
        P[t] = Pp - np.outer(K, H @ Pp)
    sd = np.sqrt(P[:, 0, 0])
    return Reference(dict(x=x, P=P), [
        f"{T} measurements; final estimate: position {x[-1, 0]:.3f} m, velocity {x[-1, 1]:.4f} m/s",
        f"position standard deviation: {sd[0]:.3f} m at the start, {sd[-1]:.3f} m at the end",
        f"steady-state gain {fmt(K, '.4f')}",
    ])


# --------------------------------------------------------------------------------- economics

@example("economics/value_iteration.ein", outputs=("value", "policy", "change", "settled"),
         rtol=1e-10, atol=1e-12)
def value_iteration(_):
    G, iterations, beta, dw = 101, 300, 0.95, 0.01
    # reward[i, j]: eat the difference when moving from cake i to cake j <= i.
    i, j = np.meshgrid(np.arange(G), np.arange(G), indexing="ij")
    reward = np.where(j <= i, np.sqrt(np.maximum(i - j, 0) * dw), -np.inf)
    V = np.zeros(G)
    change = np.zeros(iterations + 1)
    for n in range(1, iterations + 1):
        new = (reward + beta * V[None, :]).max(axis=1)
        change[n] = np.abs(new - V).max()
        V = new
    attained = reward + beta * V[None, :] >= V[:, None] - 1e-12
    policy = attained.argmax(axis=1).astype(i32)             # first j attaining the max
    exact = np.sqrt((G - 1) * dw / (1 - beta ** 2))
    settled = i32(1 + np.argmax(change[1:] < 1e-12))
    return Reference(dict(value=V, policy=policy, change=change, settled=settled), [
        f"V(1) = {V[-1]:.6f}; closed form for a continuous cake {exact:.6f}",
        f"with a whole cake, eat {(G - 1 - policy[-1]) * dw:.2f} now; closed form {1 - beta ** 2:.4f}",
        f"sup-norm change at iterations 1, 10, 30: {change[1]:.3e} {change[10]:.3e} {change[30]:.3e}; "
        f"none after {settled}",
    ])


@example("economics/mccall.ein", outputs=("reservation", "mean_wait"), rtol=1e-9, atol=1e-9)
def mccall(_):
    n, beta, iterations = 60, 0.98, 500
    wage = 10.0 + np.arange(n)
    weight = (np.arange(n) + 1.0) * (n - np.arange(n))
    q = weight / weight.sum()
    comp = 10.0 + 10.0 * np.arange(5)
    accept = wage / (1 - beta)
    v = np.tile(accept, (5, 1))
    for _ in range(iterations):
        v = np.maximum(accept[None, :], (comp + beta * v @ q)[:, None])
    continuation = comp + beta * v @ q
    reservation = (1 - beta) * continuation
    mean_wait = 1 / np.array([q[accept >= c].sum() for c in continuation])
    return Reference(dict(reservation=reservation, mean_wait=mean_wait), [
        f"compensation      {fmt(comp, '.1f')}",
        f"reservation wage  {fmt(reservation, '.3f')}",
        f"expected periods unemployed {fmt(mean_wait, '.2f')}",
    ])


@example("economics/savings.ein", outputs=("balance", "reached", "interest", "deviation"),
         rtol=1e-12, atol=1e-12)
def savings(_):
    rate, deposit, start, goal, months = 0.045, 500.0, 10000.0, 250000.0, 361
    g = 1 + rate / 12
    balance = np.empty(months)
    balance[0] = start
    for m in range(1, months):
        balance[m] = g * balance[m - 1] + deposit
    m = np.arange(months)
    closed = start * g ** m + deposit * (g ** m - 1) / (g - 1)
    deviation = (np.abs(balance - closed) / closed).max()
    reached = i32(np.argmax(balance >= goal))
    paid_in = start + deposit * (months - 1)
    interest = balance[-1] - paid_in
    yearly = balance[::12]
    return Reference(dict(balance=balance, reached=reached, interest=f64(interest), deviation=deviation), [
        f"after 10, 20, 30 years: {yearly[10]:.2f} {yearly[20]:.2f} {yearly[30]:.2f}",
        f"goal of {goal:.0f} reached after {reached} months ({reached // 12} years {reached % 12} months)",
        f"paid in {paid_in:.2f}, interest earned {interest:.2f}",
        f"recurrence matches the annuity formula to {deviation:.1e} relative",
    ])


# -------------------------------------------------------------------------------- time series

@example("timeseries/exponential_smoothing.ein", rtol=1e-5, atol=1e-4, vulkan=True)
def exponential_smoothing(_):
    T, H, alpha, beta = 120, 12, f32(0.3), f32(0.1)
    seed = [12345]
    for _ in range(T - 1):
        seed.append(75 * seed[-1] % 65537)
    seed = np.array(seed, i32)
    noise = f32(10) * (seed.astype(f32) / f32(65537) - f32(0.5))
    y = f32(100) + f32(0.5) * np.arange(T, dtype=f32) + noise
    simple, level, trend = np.empty(T, f32), np.empty(T, f32), np.empty(T, f32)
    simple[0], level[0], trend[0] = y[0], y[0], y[1] - y[0]
    for t in range(1, T):
        simple[t] = alpha * y[t] + (f32(1) - alpha) * simple[t - 1]
        level[t] = alpha * y[t] + (f32(1) - alpha) * (level[t - 1] + trend[t - 1])
        trend[t] = beta * (level[t] - level[t - 1]) + (f32(1) - beta) * trend[t - 1]
    forecast = level[-1] + np.arange(1, H + 1, dtype=f32) * trend[-1]
    mae_simple = np.abs(simple[59:-1] - y[60:]).sum() / f32(60)
    mae_holt = np.abs(level[59:-1] + trend[59:-1] - y[60:]).sum() / f32(60)
    out = dict(T=i32(T), H=i32(H), alpha=alpha, beta=beta, seed=seed, noise=noise, y=y, simple=simple,
               level=level, trend=trend, forecast=forecast, mae_simple=mae_simple, mae_holt=mae_holt)
    return Reference(out, [
        f"last observation {y[-1]:.2f}; simple level {simple[-1]:.2f}; Holt level {level[-1]:.2f}, "
        f"trend {trend[-1]:.3f}",
        f"one-step mean absolute error: simple {mae_simple:.3f}, Holt {mae_holt:.3f}",
        f"Holt forecast for the next {H} steps: {fmt(forecast, '.1f')}",
    ])
