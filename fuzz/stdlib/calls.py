"""The drawers: each draws one call of a standard-library function with valid random shapes
and attributes (in the Draw's element type) and returns it with its meaning
(fuzz.stdlib.reference). CALLS says which element types each takes."""
from __future__ import annotations

import numpy as np

from fuzz.stdlib import reference as ref
from fuzz.stdlib.draw import Draw, ints
from fuzz.stdlib.spec import Want


def spatial_attributes(d: Draw, sizes: list, dilate: bool) -> tuple:
    """Kernel, strides, pads [begin.., end..], dilations for spatial `sizes`, every output >= 1."""
    kernel, strides, pads, dilations = [], [], [], []
    for size in sizes:
        dilation = d.rng.choice([1, 1, 2]) if dilate else 1
        k = d.rng.randint(1, 3)
        begin, end = d.rng.randint(0, min(2, k - 1 + dilate)), d.rng.randint(0, min(2, k - 1 + dilate))
        while size + begin + end < dilation * (k - 1) + 1:
            k, dilation = max(1, k - 1), 1
            begin, end = min(begin, k - 1), min(end, k - 1)
        kernel.append(k)
        strides.append(d.rng.randint(1, 3))
        pads.append((begin, end))
        dilations.append(dilation)
    flat = [p[0] for p in pads] + [p[1] for p in pads]
    return kernel, strides, flat, dilations


def pads_text(d: Draw, pads: list) -> str:
    """ONNX's [begin.., end..], or one entry per axis where they agree (docs/STDLIB.md)."""
    s = len(pads) // 2
    if pads[:s] == pads[s:] and d.rng.random() < 0.5:
        return ints(pads[:s])
    return ints(pads)


def summed(d: Draw, reference, arrays: tuple, *attributes) -> Want:
    """A float output that sums products of `arrays`: the reference's value, within rounding
    relative to the same reference over their magnitudes (a sum's error scales with its |terms|)."""
    wide = [d.wide(a) for a in arrays]
    return d.close(reference(*wide, *attributes), reference(*(np.abs(w) for w in wide), *attributes))


def conv(d: Draw):
    s = d.rng.randint(1, 3)
    group = d.rng.choice([1, 1, 2, 3])
    cg, mg = d.rng.randint(1, 3), d.rng.randint(1, 3)
    sizes = d.shape(s, 1, 7 if s < 3 else 5)
    kernel, strides, pads, dilations = spatial_attributes(d, sizes, dilate=True)
    x = d.input([d.rng.randint(1, 2), group * cg] + sizes)
    w = d.input([group * mg, cg] + kernel)
    b = d.input([group * mg])
    call = f"std::ml::conv({x}, {w}, {b}, {ints(strides)}, {pads_text(d, pads)}, {ints(dilations)}, {group})"
    return d.program("std::ml::conv", call, summed(d, ref.conv, (x, w, b), strides, pads, dilations, group))


def conv_transpose(d: Draw):
    s = d.rng.randint(1, 3)
    sizes = d.shape(s, 1, 5 if s < 3 else 4)
    kernel = [d.rng.randint(1, 3) for _ in range(s)]
    strides = [d.rng.randint(1, 3) for _ in range(s)]
    output_padding = [d.rng.randint(0, st - 1) for st in strides]
    pads = [d.rng.randint(0, k - 1) for k in kernel] + [d.rng.randint(0, k - 1) for k in kernel]
    for a in range(s):                                  # at least one output element per axis
        full = strides[a] * (sizes[a] - 1) + kernel[a] + output_padding[a]
        while full - pads[a] - pads[s + a] < 1:
            pads[a if pads[a] > pads[s + a] else s + a] -= 1
    c, m = d.rng.randint(1, 3), d.rng.randint(1, 3)
    x = d.input([d.rng.randint(1, 2), c] + sizes)
    w = d.input([c, m] + kernel)
    b = d.input([m])
    call = f"std::ml::conv_transpose({x}, {w}, {b}, {ints(strides)}, {pads_text(d, pads)}, {ints(output_padding)})"
    return d.program("std::ml::conv_transpose", call,
                     summed(d, ref.conv_transpose, (x, w, b), strides, pads, output_padding))


def depthwise_conv(d: Draw):
    """ONNX Conv with one group per channel (weights [C, 1, kernel..])."""
    s = d.rng.randint(1, 2)
    c = d.rng.randint(1, 4)
    sizes = d.shape(s, 1, 7)
    kernel, strides, pads, dilations = spatial_attributes(d, sizes, dilate=True)
    x = d.input([d.rng.randint(1, 2), c] + sizes)
    w = d.input([c, 1] + kernel)
    b = d.input([c])
    call = f"std::ml::depthwise_conv({x}, {w}, {b}, {ints(strides)}, {pads_text(d, pads)}, {ints(dilations)})"
    return d.program("std::ml::depthwise_conv", call, summed(d, ref.conv, (x, w, b), strides, pads, dilations, c))


def lp_pool(d: Draw):
    s = d.rng.randint(1, 2)
    sizes = d.shape(s, 2, 7)
    kernel = [d.rng.randint(1, min(3, n)) for n in sizes]
    strides = [d.rng.randint(1, 3) for _ in sizes]
    p = d.rng.choice([1.0, 2.0, 3.0])
    x = d.input(d.shape(2, 1, 3) + sizes)
    X = d.wide(x)
    call = f"std::ml::lp_pool({x}, {ints(kernel)}, {ints(strides)}, {d.literal(p)})"
    value = ref.lp_pool(X, kernel, strides, p)
    return d.program("std::ml::lp_pool", call, d.close(value))


def linear(d: Draw):
    """x @ W + b with W laid out [in, out] (docs/STDLIB.md), x of any rank."""
    lead = d.shape(d.rng.randint(0, 2), 1, 4)
    k, n = d.rng.randint(1, 8), d.rng.randint(1, 8)
    x, w, b = d.input(lead + [k]), d.input([k, n]), d.input([n])
    X, W, B = d.wide(x), d.wide(w), d.wide(b)
    return d.program("std::ml::linear", f"std::ml::linear({x}, {w}, {b})",
                     d.close(X @ W + B, np.abs(X) @ np.abs(W) + np.abs(B)))


def instance_normalization(d: Draw):
    shape = d.shape(2, 1, 3) + d.shape(d.rng.randint(1, 2), 2, 5)
    eps = d.rng.choice([1e-5, 1e-2])
    x, scale, b = d.input(shape), d.input([shape[1]]), d.input([shape[1]])
    X, S, B = d.wide(x), d.wide(scale), d.wide(b)
    value = ref.instance_normalization(X, S, B, eps)
    call = f"std::ml::instance_normalization({x}, {scale}, {b}, {d.literal(eps)})"
    return d.program("std::ml::instance_normalization", call, d.close(value, 1.0 + np.abs(value) + np.abs(B).reshape((1, -1) + (1,) * (X.ndim - 2))))


def pool(d: Draw, kind: str):
    s = d.rng.randint(1, 3)
    sizes = d.shape(s, 1, 7 if s < 3 else 5)
    kernel, strides, pads, _ = spatial_attributes(d, sizes, dilate=False)
    x = d.input(d.shape(2, 1, 3) + sizes)
    call = f"std::ml::{kind}({x}, {ints(kernel)}, {ints(strides)}, {pads_text(d, pads)})"
    if kind == "max_pool":
        return d.program("std::ml::max_pool", call, d.close(ref.max_pool(d.wide(x), kernel, strides, pads), 0.0))
    return d.program("std::ml::average_pool", call, summed(d, ref.average_pool, (x,), kernel, strides, pads))


def global_pool(d: Draw, kind: str):
    x = d.input(d.shape(2 + d.rng.randint(1, 3), 1, 4))
    X = d.wide(x)
    axes = tuple(range(2, X.ndim))
    if kind == "global_max_pool":
        return d.program("std::ml::global_max_pool", f"std::ml::global_max_pool({x})",
                         d.close(np.max(X, axis=axes, keepdims=True), 0.0))
    return d.program("std::ml::global_average_pool", f"std::ml::global_average_pool({x})",
                     d.close(np.mean(X, axis=axes, keepdims=True), np.mean(np.abs(X), axis=axes, keepdims=True)))


def gemm(d: Draw):
    m, k, n = (d.rng.choice([1, d.rng.randint(2, 9)]) for _ in range(3))
    ta, tb = d.rng.randint(0, 1), d.rng.randint(0, 1)
    alpha, beta = d.rng.choice([1.0, 0.5, -2.0]), d.rng.choice([1.0, 0.0, 0.25])
    a = d.input([k, m] if ta else [m, k])
    b = d.input([n, k] if tb else [k, n])
    c = d.input([m, n] if d.rng.random() < 0.5 else [n])
    A, B, C = d.wide(a), d.wide(b), d.wide(c)
    value = ref.gemm(A, B, C, alpha, beta, ta, tb)
    scale = ref.gemm(np.abs(A), np.abs(B), np.abs(C), abs(alpha), abs(beta), ta, tb)
    call = f"std::ml::gemm({a}, {b}, {c}, {d.literal(alpha)}, {d.literal(beta)}, {ta}, {tb})"
    return d.program("std::ml::gemm", call, d.close(value, scale))


def matmul(d: Draw):
    batch = d.shape(d.rng.randint(0, 2), 1, 3)
    m, k, n = (d.rng.choice([1, d.rng.randint(2, 8)]) for _ in range(3))
    a = d.input(batch + [m, k])
    b = d.input((batch if d.rng.random() < 0.6 else []) + [k, n])
    A, B = d.wide(a), d.wide(b)
    if not d.floating:
        return d.program("std::ml::matmul", f"std::ml::matmul({a}, {b})", d.exact((A.astype(np.int64) @ B).astype(A.dtype)))
    return d.program("std::ml::matmul", f"std::ml::matmul({a}, {b})", d.close(A @ B, np.abs(A) @ np.abs(B)))


def softmax(d: Draw, kind: str):
    x = d.input(d.shape(d.rng.randint(1, 4)), -3.0, 3.0)
    X = d.wide(x)
    value = ref.softmax(X) if kind == "softmax" else ref.log_softmax(X)
    scale = np.abs(value) + (1e-2 if kind == "softmax" else 1.0 + np.abs(X))
    return d.program(f"std::ml::{kind}", f"std::ml::{kind}({x})", d.close(value, scale))


def layer_normalization(d: Draw):
    shape = d.shape(d.rng.randint(1, 4))
    axis = d.rng.randint(0, len(shape) - 1)
    axis_text = axis - len(shape) if d.rng.random() < 0.4 else axis
    eps = d.rng.choice([1e-5, 1e-3, 0.1])
    x = d.input(shape)
    tail = list(range(axis, len(shape)))
    scale = d.input(shape[axis:])
    bias = d.input(shape[axis:])
    X, S, B = d.wide(x), d.wide(scale), d.wide(bias)
    value = ref.layer_normalization(X, S, B, eps, axis)
    norm = np.abs(ref.layer_normalization(X, np.ones_like(S), np.zeros_like(B), eps, axis))
    call = f"std::ml::layer_normalization({x}, {scale}, {bias}, {d.literal(eps)}, {axis_text})"
    return d.program("std::ml::layer_normalization", call, d.close(value, (1.0 + norm) * (1.0 + np.abs(S)) + np.abs(B)))


def batch_normalization(d: Draw):
    shape = d.shape(2 + d.rng.randint(0, 2))
    c = shape[1]
    eps = d.rng.choice([1e-5, 1e-3])
    x = d.input(shape)
    names = [d.input([c]) for _ in range(3)] + [d.input([c], 0.1, 2.0)]
    X, S, B, M, V = (d.wide(n) for n in [x] + names)
    value = ref.batch_normalization(X, S, B, M, V, eps)
    call = f"std::ml::batch_normalization({x}, {', '.join(names)}, {d.literal(eps)})"
    return d.program("std::ml::batch_normalization", call, d.close(value))


def reduction(d: Draw, name: str):
    meaning, magnitude, (lo, hi) = ref.REDUCTIONS[name]
    x = d.input(d.shape(d.rng.randint(1, 4)), lo, hi)
    X = d.wide(x)
    return d.program(f"std::ml::{name}", f"std::ml::{name}({x})",
                     d.close(meaning(X), abs(meaning(X)) + magnitude(X) + 1e-3))


def int_reduction(d: Draw, name: str):
    x = d.input(d.shape(d.rng.randint(1, 4)), -50, 50)
    X = d.wide(x)
    meaning = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min}[name]
    return d.program(f"std::ml::{name}", f"std::ml::{name}({x})", d.exact(np.asarray(meaning(X), X.dtype)))


def tile(d: Draw):
    x = data(d, rank=d.rng.randint(1, 3))
    X = d.wide(x)
    reps = [d.rng.randint(1, 3) for _ in range(X.ndim)]
    return d.program("std::ml::tile", f"std::ml::tile({x}, {ints(reps)})", d.exact(np.tile(X, reps)))


def reshape(d: Draw):
    """ONNX Reshape: -1 infers a size, 0 keeps the input's (allowzero = 0). shape_ops take
    shapes known at build time: no named dims."""
    d.named = False
    x = data(d, rank=d.rng.randint(1, 4))
    X = d.wide(x)
    primes = factors(X.size)
    d.rng.shuffle(primes)
    shape = []
    for f in primes:
        if shape and d.rng.random() < 0.5:
            shape[-1] *= f
        else:
            shape.append(f)
    if d.rng.random() < 0.3:
        shape.insert(d.rng.randint(0, len(shape)), 1)
    text = list(shape)
    if d.rng.random() < 0.5:
        text[d.rng.randrange(len(text))] = -1
    if text[0] == X.shape[0] and d.rng.random() < 0.5:
        text[0] = 0
    return d.program("std::ml::reshape", f"std::ml::reshape({x}, {ints(text)})", d.exact(X.reshape(shape)))


def factors(n: int) -> list:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out or [1]


def unsqueeze(d: Draw):
    d.named = False                                # shape_ops: sizes known at build time
    x = data(d, rank=d.rng.randint(1, 3))
    X = d.wide(x)
    rank = X.ndim + d.rng.randint(1, 2)
    axes = sorted(d.rng.sample(range(rank), rank - X.ndim))
    return d.program("std::ml::unsqueeze", f"std::ml::unsqueeze({x}, {ints(axes)})",
                     d.exact(np.expand_dims(X, tuple(axes))))


def squeeze(d: Draw):
    d.named = False                                # shape_ops: sizes known at build time
    shape = d.shape(d.rng.randint(1, 3), 2, 4)
    ones = d.rng.randint(1, 2)
    for _ in range(ones):
        shape.insert(d.rng.randint(0, len(shape)), 1)
    axes = [a for a, n in enumerate(shape) if n == 1]
    x = d.input(shape, -9, 9)
    return d.program("std::ml::squeeze", f"std::ml::squeeze({x}, {ints(axes)})",
                     d.exact(np.squeeze(d.wide(x), tuple(axes))))


def expand(d: Draw):
    """Broadcast by NumPy's rules; a 1 in `shape` keeps the data's size. The data's sizes are
    known at build time; in a call with named dims, a size that an axis of length 1 grows to is
    a named dim (a run-time size, as `expand(bias, [R, C])`)."""
    named, d.named = d.named, False                # shape_ops: the data's sizes known at build time
    shape = [d.rng.choice([1, d.rng.randint(2, 4)]) for _ in range(d.rng.randint(1, 3))]
    x = d.input(shape, -9, 9)
    target = [d.rng.randint(1, 3) for _ in range(d.rng.randint(0, 1))] + \
        [d.rng.choice([1, d.rng.randint(2, 3)]) if n == 1 else d.rng.choice([1, n]) for n in shape]
    want_shape = np.broadcast_shapes(tuple(shape), tuple(target))
    off = len(target) - len(shape)
    sizes = [d.named_size(n) if named and n > 1 and (k < off or shape[k - off] == 1) else str(n)
             for k, n in enumerate(target)]
    return d.program("std::ml::expand", f"std::ml::expand({x}, [{', '.join(sizes)}])",
                     d.exact(np.broadcast_to(d.wide(x), want_shape)))


def gather_elements(d: Draw, shorter: bool = False):
    """ONNX GatherElements; `shorter`: indices may be shorter than the data on the other axes too."""
    shape = d.shape(d.rng.randint(1, 3))
    axis = d.rng.randint(0, len(shape) - 1)
    x = d.input(shape, -9, 9)
    n = shape[axis]
    index_shape = [d.rng.randint(1, s) if shorter and d.rng.random() < 0.5 else s for s in shape]
    index_shape[axis] = d.rng.randint(1, 4)
    i = d.input(index_shape, -n, n - 1, dtype=d.rng.choice(["i32", "i64"]), fixed=(axis,))
    axis_text = axis - len(shape) if d.rng.random() < 0.3 else axis
    cut = d.wide(x)[tuple(slice(None) if a == axis else slice(0, m) for a, m in enumerate(index_shape))]
    want = np.take_along_axis(cut, d.arrays[i[1:]].astype(np.int64) % n, axis=axis)
    return d.program("std::ml::gather_elements", f"std::ml::gather_elements({x}, {i}, {axis_text})", d.exact(want))


def scatter_elements(d: Draw, function: str):
    """ONNX ScatterElements (and its alias std::ml::scatter): indices of the data's rank, each
    axis but `axis` at most the data's size, index values in [-n, n - 1] (duplicates too: the
    later write wins), updates of the indices' shape."""
    shape = d.shape(d.rng.randint(1, 4))
    axis = d.rng.randint(0, len(shape) - 1)
    x = d.input(shape, -9, 9)
    n = shape[axis]
    index_shape = [d.rng.randint(1, s) if d.rng.random() < 0.3 else s for s in shape]
    index_shape[axis] = d.rng.randint(1, 4)
    i = d.input(index_shape, -n, n - 1, dtype=d.rng.choice(["i32", "i64"]), fixed=(axis,))
    u = d.input(index_shape, -9, 9, fixed=(axis,))
    axis_text = axis - len(shape) if d.rng.random() < 0.3 else axis
    want = ref.scatter_elements(d.wide(x), d.arrays[i[1:]], d.wide(u), axis)
    return d.program(function, f"{function}({x}, {i}, {u}, {axis_text})", d.exact(want))


def index_rows(d: Draw, shape: list) -> str:
    """ONNX GatherND's and ScatterND's indices for data of `shape`: [lead.., k] with k in 1..rank,
    0-2 lead axes (at least one where k is the rank: a result of no axes is not drawn), column
    j's values in [-shape[j], shape[j] - 1]."""
    k = d.rng.randint(1, len(shape))
    lead = d.shape(d.rng.randint(0 if k < len(shape) else 1, 2), 1, 4)
    dtype = d.rng.choice(["i32", "i64"])
    i = d.input(lead + [k], 0, 0, dtype=dtype, fixed=(len(lead),))
    columns = [d.values.integers(-shape[j], shape[j], lead) for j in range(k)]
    d.arrays[i[1:]] = np.stack(columns, axis=-1).astype(dtype.replace("i", "int"))
    return i


def gather_nd(d: Draw):
    shape = d.shape(d.rng.randint(1, 4))
    x = d.input(shape, -9, 9)
    i = index_rows(d, shape)
    want = ref.gather_nd(d.wide(x), d.arrays[i[1:]])
    return d.program("std::ml::gather_nd", f"std::ml::gather_nd({x}, {i})", d.exact(want))


def scatter_nd(d: Draw):
    shape = d.shape(d.rng.randint(1, 4))
    x = d.input(shape, -9, 9)
    i = index_rows(d, shape)
    rows = d.arrays[i[1:]]
    u = d.input(list(rows.shape[:-1]) + shape[rows.shape[-1]:], -9, 9)
    want = ref.scatter_nd(d.wide(x), rows, d.wide(u))
    return d.program("std::ml::scatter_nd", f"std::ml::scatter_nd({x}, {i}, {u})", d.exact(want))


def triangle(d: Draw, kind: str):
    """ONNX Trilu of a matrix: tril keeps j - i <= k, triu j - i >= k."""
    x = data(d, rank=2)
    k = d.rng.randint(-3, 3)
    want = (np.tril if kind == "tril" else np.triu)(d.wide(x), k)
    return d.program(f"std::ml::{kind}", f"std::ml::{kind}({x}, {k})", d.exact(want))


def first_axis(d: Draw, kind: str):
    """roll, flip and repeat_interleave, along the first axis (docs/STDLIB.md) as NumPy's."""
    x = data(d, rank=d.rng.randint(1, 3))
    X = d.wide(x)
    if kind == "flip":
        return d.program("std::ml::flip", f"std::ml::flip({x})", d.exact(np.flip(X, 0)))
    n = d.rng.randint(-6, 6) if kind == "roll" else d.rng.randint(1, 3)
    want = np.roll(X, n, 0) if kind == "roll" else np.repeat(X, n, 0)
    return d.program(f"std::ml::{kind}", f"std::ml::{kind}({x}, {n})", d.exact(want))


def depth_to_space(d: Draw):
    """ONNX DepthToSpace, DCR mode: [N, C, H, W] -> [N, C / b^2, H b, W b]; C fixed."""
    b, c = d.rng.randint(1, 3), d.rng.randint(1, 2)
    x = d.input([d.rng.randint(1, 2), c * b * b] + d.shape(2, 1, 4), -9, 9, fixed=(1,))
    X = d.wide(x)
    n, _, h, w = X.shape
    want = X.reshape(n, b, b, c, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c, h * b, w * b)
    return d.program("std::ml::depth_to_space", f"std::ml::depth_to_space({x}, {b})", d.exact(want))


def space_to_depth(d: Draw):
    """ONNX SpaceToDepth: [N, C, H, W] -> [N, C b^2, H / b, W / b]; H and W multiples of b, fixed."""
    b = d.rng.randint(1, 3)
    h, w = b * d.rng.randint(1, 3), b * d.rng.randint(1, 3)
    x = d.input([d.rng.randint(1, 2), d.rng.randint(1, 3), h, w], -9, 9, fixed=(2, 3))
    X = d.wide(x)
    n, c = X.shape[:2]
    want = X.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)
    return d.program("std::ml::space_to_depth", f"std::ml::space_to_depth({x}, {b})", d.exact(want))


def cumsum(d: Draw):
    """The running sum along the last axis, inclusive (docs/STDLIB.md)."""
    x = data(d, rank=d.rng.randint(1, 3))
    X = d.wide(x)
    if not d.floating:
        return d.program("std::ml::cumsum", f"std::ml::cumsum({x})", d.exact(np.cumsum(X, -1).astype(X.dtype)))
    return d.program("std::ml::cumsum", f"std::ml::cumsum({x})", d.close(np.cumsum(X, -1), np.cumsum(np.abs(X), -1)))


def products(d: Draw, kind: str):
    """outer of two vectors, kron of two matrices: one product per element."""
    rank = 1 if kind == "outer" else 2
    a, b = data(d, -5, 5, rank=rank), data(d, -5, 5, rank=rank)
    A, B = d.wide(a), d.wide(b)
    want = np.outer(A, B) if kind == "outer" else np.kron(A, B)
    return d.program(f"std::ml::{kind}", f"std::ml::{kind}({a}, {b})",
                     d.close(want) if d.floating else d.exact(want.astype(A.dtype)))


def diagonal(d: Draw, kind: str):
    """trace and diag_extract of a matrix (its min(rows, cols) diagonal), diag_construct of a vector."""
    x = data(d, rank=1 if kind == "diag_construct" else 2)
    X = d.wide(x)
    call = f"std::ml::{kind}({x})"
    if kind == "diag_construct":
        return d.program("std::ml::diag_construct", call, d.exact(np.diag(X)))
    if kind == "diag_extract":
        return d.program("std::ml::diag_extract", call, d.exact(np.diagonal(X)))
    value = np.trace(X)
    want = d.close(value, np.trace(np.abs(X))) if d.floating else d.exact(np.asarray(value, X.dtype))
    return d.program("std::ml::trace", call, want)


COMPARISONS = {"equal": np.equal, "greater": np.greater, "greater_or_equal": np.greater_equal,
               "less": np.less, "less_or_equal": np.less_equal, "not_equal": np.not_equal}


def comparison(d: Draw, name: str):
    """ONNX Equal, Greater, ..: bools; a third of the pairs tie (integers tie more often)."""
    shape = d.shape(d.rng.randint(1, 3))
    a, b = d.input(shape, -3, 3), d.input(shape, -3, 3)
    ties = d.values.random(shape) < 0.3
    d.arrays[b[1:]] = np.where(ties, d.arrays[a[1:]], d.arrays[b[1:]])
    want = COMPARISONS[name](d.wide(a), d.wide(b))
    return d.program(f"std::ml::{name}", f"std::ml::{name}({a}, {b})", d.exact(want, "bool"))


LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}


def logical(d: Draw, name: str):
    """ONNX And, Or, Xor, Not (and std::ml::not) of bools."""
    shape = d.shape(d.rng.randint(1, 3))
    a = d.input(shape)
    if name in ("logical_not", "not"):
        return d.program(f"std::ml::{name}", f"std::ml::{name}({a})", d.exact(~d.arrays[a[1:]]))
    b = d.input(shape)
    want = LOGICAL[name](d.arrays[a[1:]], d.arrays[b[1:]])
    return d.program(f"std::ml::{name}", f"std::ml::{name}({a}, {b})", d.exact(want))


def floor_mod(d: Draw):
    """std::math::mod (std::ml's too): the sign of the divisor (np.mod); an integer mod 0 is 0.
    Float quotients near a whole number (where the floor is too close to call) are moved away."""
    shape = d.shape(d.rng.randint(1, 3))
    function = d.rng.choice(["std::math::mod", "std::ml::mod"])
    if not d.floating:
        x, y = d.input(shape, -20, 20), d.input(shape, -5, 5)
        with np.errstate(divide="ignore", invalid="ignore"):
            want = np.mod(d.wide(x), d.wide(y))
        return d.program(function, f"{function}({x}, {y})", d.exact(want))
    x, y = d.input(shape, -6.0, 6.0), d.input(shape, 0.5, 3.0)
    d.arrays[y[1:]] *= np.where(d.values.random(shape) < 0.5, -1, 1).astype(d.arrays[y[1:]].dtype)
    X, Y = d.wide(x), d.wide(y)
    near = np.abs(X / Y - np.round(X / Y)) < 1e-3
    d.arrays[x[1:]] = np.where(near, d.arrays[x[1:]] + d.arrays[y[1:]] / 2, d.arrays[x[1:]])
    X = d.wide(x)
    return d.program(function, f"{function}({x}, {y})", d.close(np.mod(X, Y), 1.0 + np.abs(X)))


def loss(d: Draw, name: str):
    """std::ml's losses (docs/STDLIB.md): means over all elements, cross entropies over the
    batch of [.., classes] (probabilities, or logits for softmax_cross_entropy_loss)."""
    shape = d.shape(d.rng.randint(1, 3))
    probabilities = name in ("binary_cross_entropy", "cross_entropy_loss")
    p = d.input(shape, 0.05, 0.95) if probabilities else d.input(shape, -3.0, 3.0)
    t = d.input(shape, 0.0, 1.0)
    P, T = d.wide(p), d.wide(t)
    rows = P.size / P.shape[-1]
    delta = d.rng.choice([0.5, 1.0, 2.0])
    terms = {"mse_loss": lambda: (P - T) ** 2,
             "mae_loss": lambda: np.abs(P - T),
             "huber_loss": lambda: np.where(np.abs(P - T) <= delta, 0.5 * (P - T) ** 2,
                                            delta * (np.abs(P - T) - 0.5 * delta)),
             "binary_cross_entropy": lambda: -(T * np.log(P) + (1 - T) * np.log(1 - P)),
             "cross_entropy_loss": lambda: -T * np.log(P),
             "softmax_cross_entropy_loss": lambda: -T * ref.log_softmax(P)}[name]()
    extra = f", {d.literal(delta)}" if name == "huber_loss" else ""
    count = rows if name in ("cross_entropy_loss", "softmax_cross_entropy_loss") else P.size
    value, magnitude = np.sum(terms) / count, np.sum(np.abs(terms)) / count
    return d.program(f"std::ml::{name}", f"std::ml::{name}({p}, {t}{extra})", d.close(value, 1.0 + magnitude))


def along_last(d: Draw, name: str):
    """cosine_similarity and l2_normalize along the last axis (docs/STDLIB.md); vectors kept away
    from zero norm."""
    shape = d.shape(d.rng.randint(1, 3))
    a = d.input(shape, 0.2, 2.0)
    d.arrays[a[1:]] *= np.where(d.values.random(shape) < 0.5, -1, 1).astype(d.arrays[a[1:]].dtype)
    A = d.wide(a)
    norm_a = np.sqrt(np.sum(A * A, -1))
    if name == "l2_normalize":
        eps = d.rng.choice([1e-12, 1e-6])
        value = A / np.sqrt(np.maximum(norm_a ** 2, eps))[..., None]
        return d.program("std::ml::l2_normalize", f"std::ml::l2_normalize({a}, {d.literal(eps)})", d.close(value))
    b = d.input(shape, -2.0, 2.0)
    B = d.wide(b)
    value = np.sum(A * B, -1) / np.sqrt(np.sum(A * A, -1) * np.sum(B * B, -1))
    scale = 1.0 + np.sum(np.abs(A * B), -1) / np.sqrt(np.sum(A * A, -1) * np.sum(B * B, -1) + 1e-300)
    return d.program("std::ml::cosine_similarity", f"std::ml::cosine_similarity({a}, {b})", d.close(value, scale))


def lrn(d: Draw):
    """ONNX LRN: x / (bias + alpha / size * the sum of x^2 over channels c - floor((size - 1) / 2)
    .. c + ceil((size - 1) / 2), those there are)^beta."""
    x = d.input([d.rng.randint(1, 2), d.rng.randint(1, 5)] + d.shape(d.rng.randint(1, 2), 1, 4), -2.0, 2.0)
    X = d.wide(x)
    size = d.rng.randint(1, 5)
    alpha, beta, bias = d.rng.choice([1e-4, 0.1, 0.5]), d.rng.choice([0.75, 0.5, 1.0]), d.rng.choice([1.0, 2.0])
    C = X.shape[1]
    sq = np.zeros_like(X)
    for c in range(C):
        lo, hi = max(0, c - (size - 1) // 2), min(C - 1, c + (size - 1 + 1) // 2)
        sq[:, c] = np.sum(X[:, lo:hi + 1] ** 2, axis=1)
    value = X / (bias + alpha / size * sq) ** beta
    call = f"std::ml::lrn({x}, {size}, {d.literal(alpha)}, {d.literal(beta)}, {d.literal(bias)})"
    return d.program("std::ml::lrn", call, d.close(value))


def lp_normalization(d: Draw):
    """ONNX LpNormalization, p 1 or 2, along an axis (negative too); entries away from zero."""
    shape = d.shape(d.rng.randint(1, 4))
    axis = d.rng.randint(0, len(shape) - 1)
    p = d.rng.choice([1, 2])
    x = d.input(shape, 0.2, 2.0)
    d.arrays[x[1:]] *= np.where(d.values.random(shape) < 0.5, -1, 1).astype(d.arrays[x[1:]].dtype)
    X = d.wide(x)
    norm = np.sum(np.abs(X), axis, keepdims=True) if p == 1 else np.sqrt(np.sum(X * X, axis, keepdims=True))
    axis_text = axis - len(shape) if d.rng.random() < 0.3 else axis
    call = f"std::ml::lp_normalization({x}, {axis_text}, {p})"
    return d.program("std::ml::lp_normalization", call, d.close(X / norm))


def mean_variance_normalization(d: Draw):
    """ONNX MeanVarianceNormalization over the listed axes: (x - mean) / sqrt(variance + 1e-9)."""
    shape = d.shape(d.rng.randint(1, 4), 2, 4)
    axes = sorted(d.rng.sample(range(len(shape)), d.rng.randint(1, len(shape))))
    x = d.input(shape, -2.0, 2.0)
    X = d.wide(x)
    centred = X - np.mean(X, tuple(axes), keepdims=True)
    std = np.sqrt(np.mean(centred ** 2, tuple(axes), keepdims=True) + 1e-9)
    value = centred / std
    call = f"std::ml::mean_variance_normalization({x}, {ints(axes)})"
    scale = 1.0 + np.abs(value) + 4.0 * np.max(np.abs(X)) / std
    return d.program("std::ml::mean_variance_normalization", call, d.close(value, scale))


def onehot(d: Draw):
    """ONNX OneHot: i32 or i64 indices, negative ones from the end, any outside -depth..depth - 1 all off."""
    depth = d.rng.randint(1, 5)
    i = d.input(d.shape(d.rng.randint(1, 2)), -depth - 1, depth, dtype=d.rng.choice(["i32", "i64"]))
    off, on = d.rng.choice([(0.0, 1.0), (-1.0, 2.5)])
    index = d.arrays[i[1:]].astype(np.int64)
    want = np.where(np.where(index < 0, index + depth, index)[..., None] == np.arange(depth), on, off)
    call = f"std::ml::onehot({i}, {depth}, [{d.literal(off)}, {d.literal(on)}])"
    return d.program("std::ml::onehot", call, d.exact(want.astype(np.float64)))


def data(d: Draw, lo=-9, hi=9, rank=None, **kw) -> str:
    """An input of any element type, for functions that move data."""
    return d.input(d.shape(rank or d.rng.randint(1, 5), **kw), lo, hi)


def transpose(d: Draw):
    x = data(d)
    return d.program("std::ml::transpose", f"std::ml::transpose({x})", d.exact(np.transpose(d.wide(x))))


def array_transpose(d: Draw):
    """std::array::transpose: the matrix transpose (docs/STDLIB.md)."""
    x = data(d, rank=2)
    return d.program("std::array::transpose", f"std::array::transpose({x})", d.exact(d.wide(x).T))


def array_concatenate(d: Draw):
    return _concatenation(d, "std::array::concatenate", d.rng.randint(1, 3))


def flatten(d: Draw):
    x = data(d, rank=d.rng.randint(2, 5))
    X = d.wide(x)
    return d.program("std::ml::flatten", f"std::ml::flatten({x})", d.exact(X.reshape(X.shape[0], -1)))


def concat(d: Draw):
    return _concatenation(d, "std::ml::concat", d.rng.randint(1, 4))


def _concatenation(d: Draw, function: str, rank: int):
    """Two arrays joined along their first axis, as `function` (std::array's and std::ml's) does."""
    shape = d.shape(rank)
    a = d.input(shape, -9, 9)
    b = d.input([d.rng.randint(1, 4)] + shape[1:], -9, 9)
    return d.program(function, f"{function}({a}, {b})", d.exact(np.concatenate([d.wide(a), d.wide(b)], axis=0)))


def pad(d: Draw):
    x = data(d, rank=d.rng.randint(1, 4))
    X = d.wide(x)
    pads = [d.rng.randint(0, 2) for _ in range(2 * X.ndim)]
    value = d.rng.choice([0, 1, -3]) if not d.floating else d.rng.choice([0.0, 1.5, -2.0])
    text = d.literal(value) if d.floating else (str(value) + ("i64" if d.dtype == "i64" else ""))
    want = np.pad(X, [(pads[a], pads[X.ndim + a]) for a in range(X.ndim)], constant_values=value)
    return d.program("std::ml::pad", f"std::ml::pad({x}, {ints(pads)}, {text})", d.exact(want))


def gather(d: Draw):
    x = data(d, rank=d.rng.randint(1, 3))
    X = d.wide(x)
    axis = d.rng.randint(0, X.ndim - 1)
    size = X.shape[axis]
    i = d.input(d.shape(d.rng.randint(1, 2)), -size, size - 1, dtype=d.rng.choice(["i32", "i64"]))
    axis_text = axis - X.ndim if d.rng.random() < 0.3 else axis
    want = np.take(X, d.arrays[i[1:]].astype(np.int64) % size, axis=axis)
    return d.program("std::ml::gather", f"std::ml::gather({x}, {i}, {axis_text})", d.exact(want))


def where(d: Draw):
    shape = d.shape(d.rng.randint(1, 4))
    a, b = d.input(shape, -9, 9), d.input(shape, -9, 9)
    A, B = d.wide(a), d.wide(b)
    return d.program("std::ml::where", f"std::ml::where(std::ml::greater({a}, {b}), {b}, {a})",
                     d.exact(np.where(A > B, B, A)))


def slice_(d: Draw):
    x = data(d, rank=d.rng.randint(1, 4))
    X = d.wide(x)
    axes = d.rng.sample(range(X.ndim), d.rng.randint(1, X.ndim))
    starts, ends, steps, axes_text = [], [], [], []
    for axis in axes:
        n = X.shape[axis]
        step = d.rng.choice([1, 1, 2, 3, -1, -2])
        starts.append(d.rng.randint(-n - 1, n + 1))
        ends.append(d.rng.choice([d.rng.randint(-n - 1, n + 1), 1000 if step > 0 else -1000]))
        steps.append(step)
        axes_text.append(axis - X.ndim if d.rng.random() < 0.3 else axis)
    want = ref.slice_onnx(X, starts, ends, axes_text, steps)
    if want.size == 0:
        return slice_(d)
    call = f"std::ml::slice({x}, {ints(starts)}, {ints(ends)}, {ints(axes_text)}, {ints(steps)})"
    return d.program("std::ml::slice", call, d.exact(want))


def split(d: Draw):
    shape = d.shape(d.rng.randint(1, 4))
    axis = d.rng.randint(0, len(shape) - 1)
    parts = [d.rng.randint(1, 3) for _ in range(d.rng.randint(1, 5))]
    shape[axis] = sum(parts)
    x = d.input(shape, -9, 9, fixed=(axis,))
    X = d.wide(x)
    pieces = np.split(X, np.cumsum(parts)[:-1], axis=axis)
    axis_text = axis - len(shape) if d.rng.random() < 0.3 else axis
    return d.program("std::ml::split", f"std::ml::split({x}, {ints(parts)}, {axis_text})",
                     *(d.exact(p) for p in pieces), tuple_=True)


def topk(d: Draw):
    shape = d.shape(d.rng.randint(1, 3), 1, 6)
    axis = d.rng.randint(0, len(shape) - 1)
    k = d.rng.randint(1, shape[axis])
    x = d.input(shape, fixed=(axis,))
    values, idx = ref.topk(d.wide(x), k, axis)
    axis_text = axis - len(shape) if d.rng.random() < 0.4 else axis
    return d.program("std::ml::topk", f"std::ml::topk({x}, {k}, {axis_text})", d.exact(values), d.exact(idx, "i64"))


def arg(d: Draw, module: str, kind: str):
    """The first occurrence along the last axis (NumPy's too); ints are drawn with ties."""
    x = d.input(d.shape(d.rng.randint(1, 4)), -3 if not d.floating else -1.0, 3 if not d.floating else 1.0)
    want = (np.argmax if kind == "argmax" else np.argmin)(d.wide(x), axis=-1)
    dtype = "i64" if module == "ml" else "i32"
    return d.program(f"std::{module}::{kind}", f"std::{module}::{kind}({x})", d.exact(want, dtype))


def activation(d: Draw, name: str):
    x = d.input(d.shape(d.rng.randint(1, 4)), -4.0, 4.0)
    X = d.wide(x)
    return d.program(f"std::ml::{name}", f"std::ml::{name}({x})", d.close(ref.ACTIVATIONS[name](X)))


def activation_1(d: Draw, name: str):
    x = d.input(d.shape(d.rng.randint(1, 4)), -4.0, 4.0)
    a = d.rng.choice([0.1, 0.5, 1.5])
    X = d.wide(x)
    return d.program(f"std::ml::{name}", f"std::ml::{name}({x}, {d.literal(a)})", d.close(ref.ACTIVATIONS_1[name](X, a)))


def activation_2(d: Draw, name: str):
    x = d.input(d.shape(d.rng.randint(1, 4)), -4.0, 4.0)
    a, b = sorted(d.rng.sample([-1.5, -0.5, 0.25, 1.0, 2.0], 2))
    X = d.wide(x)
    return d.program(f"std::ml::{name}", f"std::ml::{name}({x}, {d.literal(a)}, {d.literal(b)})",
                     d.close(ref.ACTIVATIONS_2[name](X, a, b)))


def math_1(d: Draw, name: str, module: str = "std::math"):
    meaning, (lo, hi) = ref.MATH_1[name]
    x = d.input(d.shape(d.rng.randint(1, 4)), lo, hi)
    X = d.wide(x)
    value = meaning(X)
    if name in ("floor", "ceil", "trunc", "round", "sign", "abs", "neg"):
        return d.program(f"{module}::{name}", f"{module}::{name}({x})", d.exact(value.astype(X.dtype)))
    return d.program(f"{module}::{name}", f"{module}::{name}({x})", d.close(value))


def math_2(d: Draw, name: str, module: str = "std::math"):
    """pow (std::ml's `power`), fmod, atan2, max and min of two floats."""
    shape = d.shape(d.rng.randint(1, 3))
    power = name in ("pow", "power")
    lo = 0.1 if power else {"fmod": -5.0, "atan2": -3.0, "max": -3.0, "min": -3.0}[name]
    x, y = d.input(shape, lo, 5.0), d.input(shape, -3.0 if name != "fmod" else 0.5, 3.0)
    X, Y = d.wide(x), d.wide(y)
    meaning = np.power if power else {"fmod": np.fmod, "atan2": np.arctan2, "max": np.maximum, "min": np.minimum}[name]
    value = meaning(X, Y)
    scale = np.abs(value) * (1.0 + np.abs(np.log(X)) * np.abs(Y)) + 1.0 if power else None
    return d.program(f"{module}::{name}", f"{module}::{name}({x}, {y})", d.close(value, scale))


def clamp_side(d: Draw, name: str):
    x = d.input(d.shape(d.rng.randint(1, 3)), -3.0, 3.0) if d.floating else d.input(d.shape(2), -9, 9)
    bound = d.rng.choice([-1, 0, 2])
    text = d.literal(bound) if d.floating else str(bound)
    X = d.wide(x)
    want = np.maximum(X, bound) if name == "clamp_min" else np.minimum(X, bound)
    return d.program(f"std::math::{name}", f"std::math::{name}({x}, {text})", d.exact(want.astype(X.dtype)))


def clamp(d: Draw, function: str = "std::math::clamp"):
    """std::math::clamp, or std::ml::clip (the same function, ONNX Clip)."""
    x = d.input(d.shape(d.rng.randint(1, 4)), -3.0, 3.0) if d.floating else d.input(d.shape(2), -9, 9)
    lo, hi = sorted(d.rng.sample([-2, -1, 0, 1, 2], 2))
    lo_t, hi_t = (d.literal(lo), d.literal(hi)) if d.floating else (str(lo), str(hi))
    return d.program(function, f"{function}({x}, {lo_t}, {hi_t})",
                     d.exact(np.clip(d.wide(x), lo, hi).astype(d.wide(x).dtype)))


FLOATS, INTS = ("f32", "f64"), ("i32", "i64")

# name -> (drawer, element types, weight)
CALLS = {
    "conv": (conv, FLOATS, 6),
    "max_pool": (lambda d: pool(d, "max_pool"), FLOATS, 3),
    "average_pool": (lambda d: pool(d, "average_pool"), FLOATS, 3),
    "conv_transpose": (conv_transpose, FLOATS, 3),
    "depthwise_conv": (depthwise_conv, FLOATS, 2),
    "lp_pool": (lp_pool, FLOATS, 1),
    "linear": (linear, FLOATS, 2),
    "instance_normalization": (instance_normalization, FLOATS, 1),
    "tile": (tile, FLOATS + INTS, 1),
    "reshape": (reshape, FLOATS + INTS, 2),
    "unsqueeze": (unsqueeze, FLOATS + INTS, 1),
    "squeeze": (squeeze, FLOATS + INTS, 1),
    "expand": (expand, FLOATS + INTS, 1),
    "gather_elements": (gather_elements, FLOATS + INTS, 1),
    "onehot": (onehot, FLOATS, 1),
    "activation_2": (lambda d: activation_2(d, d.rng.choice(sorted(ref.ACTIVATIONS_2))), FLOATS, 1),
    "global_average_pool": (lambda d: global_pool(d, "global_average_pool"), FLOATS, 1),
    "global_max_pool": (lambda d: global_pool(d, "global_max_pool"), FLOATS, 1),
    "gemm": (gemm, FLOATS, 3),
    "matmul": (matmul, FLOATS + INTS, 3),
    "softmax": (lambda d: softmax(d, "softmax"), FLOATS, 2),
    "log_softmax": (lambda d: softmax(d, "log_softmax"), FLOATS, 2),
    "layer_normalization": (layer_normalization, FLOATS, 2),
    "batch_normalization": (batch_normalization, FLOATS, 2),
    "reduce": (lambda d: reduction(d, d.rng.choice(sorted(ref.REDUCTIONS))), FLOATS, 4),
    "reduce_int": (lambda d: int_reduction(d, d.rng.choice(["reduce_sum", "reduce_max", "reduce_min"])), INTS, 1),
    "transpose": (transpose, FLOATS + INTS, 2),
    "flatten": (flatten, FLOATS + INTS, 1),
    "concat": (concat, FLOATS + INTS, 2),
    "pad": (pad, FLOATS + INTS, 2),
    "gather": (gather, FLOATS + INTS, 2),
    "where": (where, FLOATS + INTS, 1),
    "slice": (slice_, FLOATS + INTS, 2),
    "split": (split, FLOATS + INTS, 2),
    "topk": (topk, FLOATS, 2),
    "argmax": (lambda d: arg(d, d.rng.choice(["ml", "array"]), d.rng.choice(["argmax", "argmin"])), FLOATS + INTS, 2),
    "activation": (lambda d: activation(d, d.rng.choice(sorted(ref.ACTIVATIONS))), FLOATS, 4),
    "activation_1": (lambda d: activation_1(d, d.rng.choice(sorted(ref.ACTIVATIONS_1))), FLOATS, 3),
    "math_1": (lambda d: math_1(d, d.rng.choice(sorted(ref.MATH_1))), FLOATS, 6),
    "math_2": (lambda d: math_2(d, d.rng.choice(["pow", "fmod", "atan2", "max", "min"])), FLOATS, 2),
    "clamp": (clamp, FLOATS + INTS, 1),
    "clamp_side": (lambda d: clamp_side(d, d.rng.choice(["clamp_min", "clamp_max"])), FLOATS + INTS, 1),
    "array_transpose": (array_transpose, FLOATS + INTS, 1),
    "array_concatenate": (array_concatenate, FLOATS + INTS, 1),
}

# Drawn in a case instead of one of CALLS with their share of the weights, from a random
# stream of their own (fuzz.stdlib.generate), so that adding them kept every other case of a
# seed as it was.
LATER_CALLS = {
    "gather_elements_shorter": (lambda d: gather_elements(d, shorter=True), FLOATS + INTS, 1),
    "gather_nd": (gather_nd, FLOATS + INTS, 1),
    "scatter": (lambda d: scatter_elements(d, "std::ml::scatter"), FLOATS + INTS, 1),
    "scatter_elements": (lambda d: scatter_elements(d, "std::ml::scatter_elements"), FLOATS + INTS, 2),
    "scatter_nd": (scatter_nd, FLOATS + INTS, 2),
    "triangle": (lambda d: triangle(d, d.rng.choice(["tril", "triu"])), FLOATS + INTS, 1),
    "first_axis": (lambda d: first_axis(d, d.rng.choice(["roll", "flip", "repeat_interleave"])), FLOATS + INTS, 1),
    "depth_to_space": (depth_to_space, FLOATS + INTS, 1),
    "space_to_depth": (space_to_depth, FLOATS + INTS, 1),
    "cumsum": (cumsum, FLOATS + INTS, 1),
    "products": (lambda d: products(d, d.rng.choice(["outer", "kron"])), FLOATS + INTS, 1),
    "diagonal": (lambda d: diagonal(d, d.rng.choice(["trace", "diag_extract", "diag_construct"])), FLOATS + INTS, 1),
    "comparison": (lambda d: comparison(d, d.rng.choice(sorted(COMPARISONS))), FLOATS + INTS, 1),
    "logical": (lambda d: logical(d, d.rng.choice(sorted(LOGICAL) + ["logical_not", "not"])), ("bool",), 1),
    "mod": (floor_mod, FLOATS + INTS, 1),
    "loss": (lambda d: loss(d, d.rng.choice(["mse_loss", "mae_loss", "huber_loss", "binary_cross_entropy",
                                             "cross_entropy_loss", "softmax_cross_entropy_loss"])), FLOATS, 1),
    "along_last": (lambda d: along_last(d, d.rng.choice(["cosine_similarity", "l2_normalize"])), FLOATS, 1),
    "lrn": (lrn, FLOATS, 1),
    "lp_normalization": (lp_normalization, FLOATS, 1),
    "mean_variance_normalization": (mean_variance_normalization, FLOATS, 1),
}
