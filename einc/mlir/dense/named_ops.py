"""Named linalg ops for reductions that are one: contractions, convolutions and pooling.

IREE's code generators are best at named ops (microkernels, data tiling, convolution
strategies), so a reduction that matches one of PATTERNS is emitted as that op. It matches when
its body is one read (pooling) or a product of two (contractions, convolutions), each an
affine view of a program-level tensor of one float dtype (operand_views), with no reduction
guard, and every axis and summed variable is a letter of the pattern: a plain letter spans a
whole axis from 0; `y+p` is a window read at `stride * y + dilation * p`. In contractions a
letter may stand for a run of variables kept together in one order (collapsed for the op), and
operands may be transposed to match (attention's heads as a batch_matmul). Elementwise work
around the reduction stays in the enclosing kernel; anything else stays a linalg.generic.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from itertools import permutations
from typing import Callable, Optional

from iree.compiler import ir
from iree.compiler.dialects import linalg, tensor

from einc.ir.evaluate import reduction_identity, try_evaluate
from einc.ir.nodes import Const, Generic, IndexVar, Input, Op, Read, Reduce, Value, free_vars
from einc.ir.types import Lin, Quotient, SizeOp, Sym
from einc.mlir.core import scalar_ops
from einc.mlir.core.dispatch_captures import fence, is_fenced
from einc.mlir.core.shapes import index_const
from einc.mlir.dense import operand_views
from einc.mlir.dense.operand_views import View, view_tensor
from einc.mlir.core.types import element_type
from einc.target import Target

DYNAMIC = ir.ShapedType.get_dynamic_size()


@dataclass(frozen=True)
class Pattern:
    op: str                 # the linalg builder's name
    kind: str               # the reduction kind
    out: str                # the result's axes, one letter each
    operands: tuple         # each operand's axes: a letter, or "y+p" for a window
    groups: bool = False    # letters may stand for runs of variables (contractions)
    strided: bool = True    # the op takes strides and dilations attributes
    # linalg has no such op: only a target with `unrolled_poolings` takes it, written out
    # (einc.mlir.dense.cpu_poolings); elsewhere the reduction stays a generic
    written_only: bool = False


def _contraction(op: str, out: str, lhs: str, rhs: str) -> Pattern:
    return Pattern(op, "sum", out, (lhs, rhs), groups=True, strided=False)


def _pooling(op: str, kinds: str, out: str, operand: str, written_only: bool = False) -> list[Pattern]:
    return [Pattern(f"{op}_{kind}", kind, out, (operand,), written_only=written_only) for kind in kinds.split()]


PATTERNS: list[Pattern] = [
    _contraction("matmul", "m n", "m k", "k n"),
    _contraction("batch_matmul", "b m n", "b m k", "b k n"),
    _contraction("matvec", "m", "m k", "k"),
    _contraction("vecmat", "n", "k", "k n"),
    _contraction("dot", "", "k", "k"),
    Pattern("conv_1d", "sum", "x", ("x+q", "q"), strided=False),
    Pattern("conv_2d", "sum", "y x", ("y+p x+q", "p q"), strided=False),
    Pattern("conv_3d", "sum", "z y x", ("z+o y+p x+q", "o p q"), strided=False),
    Pattern("conv_1d_ncw_fcw", "sum", "n f x", ("n c x+q", "f c q")),
    Pattern("conv_1d_nwc_wcf", "sum", "n x f", ("n x+q c", "q c f")),
    Pattern("conv_2d_nchw_fchw", "sum", "n f y x", ("n c y+p x+q", "f c p q")),
    Pattern("conv_2d_nhwc_hwcf", "sum", "n y x f", ("n y+p x+q c", "p q c f")),
    Pattern("conv_2d_nhwc_fhwc", "sum", "n y x f", ("n y+p x+q c", "f p q c")),
    Pattern("conv_3d_ncdhw_fcdhw", "sum", "n f z y x", ("n c z+o y+p x+q", "f c o p q")),
    Pattern("conv_3d_ndhwc_dhwcf", "sum", "n z y x f", ("n z+o y+p x+q c", "o p q c f")),
    Pattern("depthwise_conv_1d_ncw_cw", "sum", "n c x", ("n c x+q", "c q")),
    Pattern("depthwise_conv_1d_nwc_wc", "sum", "n x c", ("n x+q c", "q c")),
    Pattern("depthwise_conv_2d_nchw_chw", "sum", "n c y x", ("n c y+p x+q", "c p q")),
    Pattern("depthwise_conv_2d_nhwc_hwc", "sum", "n y x c", ("n y+p x+q c", "p q c")),
    *_pooling("pooling_ncw", "max sum", "n c x", "n c x+q"),
    *_pooling("pooling_nwc", "max min sum", "n x c", "n x+q c"),
    *_pooling("pooling_nchw", "max sum", "n c y x", "n c y+p x+q"),
    *_pooling("pooling_nhwc", "max min sum", "n y x c", "n y+p x+q c"),
    *_pooling("pooling_ndhwc", "max min sum", "n z y x c", "n z+o y+p x+q c"),
    # windows over an image without batch or channel axes (`min[u, v](img[i + u, j + v])`: a
    # filter, an erosion, a neighbour count)
    *_pooling("pooling_x", "max min sum", "x", "x+q", written_only=True),
    *_pooling("pooling_yx", "max min sum", "y x", "y+p x+q", written_only=True),
    *_pooling("pooling_zyx", "max min sum", "z y x", "z+o y+p x+q", written_only=True),
]


# Named ops IREE gets wrong on a target stay a linalg.generic there (IREE-06: channels-first
# depthwise convolutions on vulkan-spirv).
MISCOMPILED = {"IREE-06": frozenset({"depthwise_conv_1d_ncw_cw", "depthwise_conv_2d_nchw_chw"})}
# IREE-07: on the CPU targets, contractions of an operand computed in the module (by a kernel,
# or a window or transpose of an input) over a run of variables with a run-time extent, or of a
# one-element operand, fail to compile in data tiling. The first read their collapsed operand
# through a barrier (`_operand`), the second stay generics.


def emitted_on(target: Target, found: "Match") -> bool:
    """Whether `found`'s named op is emitted on `target` (else the reduction is a generic)."""
    if found.written_out_only and not target.unrolled_poolings:
        return False
    if any(found.pattern.op in ops for defect, ops in MISCOMPILED.items() if target.has_defect(defect)):
        return False
    if not target.has_defect("IREE-07") or not found.pattern.groups:
        return True
    return not _single_element_operand(found)


def _single_element_operand(found: "Match") -> bool:
    return any(all(size.is_const and size.const == 1 for size in view.shape) for view in found.views)


# ------------------------------------------------------------------------------ axes

@dataclass(frozen=True)
class Axis:
    """One axis of the result or of an operand view: `vars` read plainly (a run after merging),
    or a window `stride * vars[0] + dilation * vars[1]`."""
    vars: tuple
    stride: int = 0         # 0 for a plain axis
    dilation: int = 0


def _axis(sub: Lin, size: Lin) -> Optional[Axis]:
    if sub.const:
        return None
    terms = list(sub.terms.items())
    if any(not isinstance(v, IndexVar) or v.lo != 0 or c <= 0 for v, c in terms):
        return None
    if len(terms) == 1 and terms[0][1] == 1 and terms[0][0].extent == size:
        return Axis((terms[0][0],))
    if len(terms) == 2 and all(v.extent != 1 for v, _ in terms):
        # IREE-08: not with a unit-extent variable, whose folded loop leaves a bare dimension
        return [Axis((y, p), s, d) for (y, s), (p, d) in (terms, terms[::-1])]   # either order
    return None


def _operand_axes(view: View) -> Optional[list]:
    """Per axis of the view: an Axis, or for a window the list of its two readings."""
    axes = [_axis(sub, size) for sub, size in zip(view.subs, view.shape)]
    return None if any(a is None for a in axes) else axes


def _merge_runs(sequences: list[list[Axis]]) -> list[list[Axis]]:
    """Merge plain axes u, w that appear everywhere as the adjacent pair (u, w): a run of
    variables that a contraction can treat as one collapsed axis."""
    while True:
        pair = _mergeable_pair(sequences)
        if pair is None:
            return sequences
        u, w = pair
        merged = Axis(u.vars + w.vars)
        sequences = [_replace_pair(seq, u, w, merged) for seq in sequences]


def _mergeable_pair(sequences: list[list[Axis]]):
    for seq in sequences:
        for u, w in zip(seq, seq[1:]):
            if all(_pair_kept(s, u, w) for s in sequences):
                return u, w
    return None


def _pair_kept(seq: list[Axis], u: Axis, w: Axis) -> bool:
    if u.stride or w.stride:
        return False
    if u not in seq and w not in seq:
        return True
    return u in seq and w in seq and seq.index(w) == seq.index(u) + 1


def _replace_pair(seq: list[Axis], u: Axis, w: Axis, merged: Axis) -> list[Axis]:
    if u not in seq:
        return seq
    k = seq.index(u)
    return seq[:k] + [merged] + seq[k + 2:]


# ------------------------------------------------------------------------------ matching

@dataclass
class Match:
    pattern: Pattern
    views: tuple                      # in the pattern's operand order
    out: list                         # the result's Axes (runs)
    operand_axes: list                # per operand, its Axes (runs, windows)
    strides: list = field(default_factory=list)
    dilations: list = field(default_factory=list)
    perms: tuple = ()                 # per operand, the view's axes in the op's order (None: as is)
    result_order: tuple = ()          # the op's result axes as positions in `out`'s order (): as is)
    # a pooling's guard decided at build time, (its window variables, a bool array over their
    # ranges): the window points it keeps. Only a pooling written out takes one (cpu_poolings).
    mask: Optional[tuple] = None

    @property
    def written_out_only(self) -> bool:
        """Whether no linalg op computes it: a pattern linalg lacks, or a pooling with a mask."""
        return self.pattern.written_only or self.mask is not None


def match(reduce: Reduce, free: list[IndexVar]) -> Optional[Match]:
    """The first pattern `reduce` over result axes `free` is an instance of. Reads are taken
    as written first (`c[2 * h + dh]` is a pooling window), then through reshaped views of
    flattened subscripts (`Wf[16 * c + 4 * h + w, k]` is a matmul operand)."""
    if not reduce.dtype.is_float:
        return None
    mask = None
    if reduce.guard is not None:
        mask = _window_mask(reduce)
        if mask is None:
            return None
    for transposed in (False, True):
        for views in (_factors(reduce.body, _VIEWS), _factors(reduce.body, _VIEWS[::-1])):
            if views is None or len(views) > 2 or any(v.read.dtype != reduce.dtype for v in views):
                continue
            for pattern in PATTERNS:
                if pattern.kind != reduce.kind or len(pattern.operands) != len(views):
                    continue
                if transposed and not pattern.groups:
                    continue
                for ordered in permutations(views):
                    found = _match_pattern(pattern, ordered, free, reduce.vars, transposed)
                    if found is not None and mask is not None:
                        found = replace(found, mask=mask) if len(pattern.operands) == 1 else None
                    if found is not None:
                        return found
    return None


def _window_mask(reduce: Reduce) -> Optional[tuple]:
    """(reduce's variables, the bool array of its guard over their ranges) where the guard reads
    only those variables and is decided at build time (`where se[u, v]` of a literal structuring
    element, `where u != 1 || v != 1`); else None."""
    if not all(v.lo.is_const and v.extent is not None and v.extent.is_const for v in reduce.vars):
        return None
    if not free_vars(reduce.guard) <= frozenset(reduce.vars):
        return None
    keeps = try_evaluate(Generic(tuple(reduce.vars), reduce.guard))
    return None if keeps is None else (tuple(reduce.vars), keeps.astype(bool))


# a read with subscripts fixed at build time is one of a slice first (`W[1, k, d]`: a layer's
# weights taken from a stack), as that axis can be no letter of a pattern
_VIEWS = (operand_views.sliced_view, operand_views.plain_view, partial(operand_views.flattened_view, sliced=True),
          operand_views.merged_view, operand_views.reversed_view, operand_views.clamped_view)


def _factors(v: Value, rules: tuple) -> Optional[list[View]]:
    """The reads a reduction body combines, as views: one read, or a product of reads (one of
    them may be a padded read through a guard). The product's tree is walked with a stack, left
    factors first: a product of thousands of factors is a tree that deep."""
    views, todo = [], [v]
    while todo:
        node = todo.pop()
        padded = operand_views.padded_read(node)
        if padded is not None:
            rest = list(padded.value.args) if isinstance(padded.value, Op) else [padded.value]
            del rest[[a is padded.view.read for a in rest].index(True)]     # one factor, not a square's both
            others = [_read_view(a, rules) for a in rest]
            if None in others:
                return None
            views += [padded.view] + others
        elif isinstance(node, Op) and node.op == "mul":
            todo.extend(reversed(node.args))
        elif (view := _read_view(node, rules)) is not None:
            views.append(view)
        else:
            return None
    return views


def _read_view(v: Value, rules: tuple) -> Optional[View]:
    # a tensor built at each point (`[D[n, 1], D[n, 0]][k]`, a literal row of an outer index's
    # reads) has no program-level tensor for an op to take as an operand
    if not isinstance(v, Read) or free_vars(v.tensor):
        return None
    view = next((view for rule in rules if (view := rule(v)) is not None), None)
    return None if view is None else operand_views.windowed(view)


def _match_pattern(pattern: Pattern, views: tuple, free: list, reduced: tuple,
                   transposed: bool = False) -> Optional[Match]:
    candidates = [_operand_axes(v) for v in views]
    if None in candidates:
        return None
    for operand_axes in _window_readings(candidates):
        for perms in _orders(operand_axes, free, reduced, transposed):
            out = [Axis((v,)) for v in free]
            sequences = [out] + [[axes[k] for k in perm] for axes, perm in zip(operand_axes, perms)]
            if pattern.groups:
                sequences = _merge_runs(sequences)
            found = _bind(pattern, sequences, set(reduced))
            if found is not None:
                found.views = views
                found.perms = tuple(None if list(p) == sorted(p) else p for p in perms)
                return found
    return None


def _orders(operand_axes: list, free: list, reduced: tuple, transposed: bool) -> list:
    """Per operand, the orders of its axes to try: as written, or with `transposed` the one a
    contraction takes, when that is another: the left operand's axes as batch, rows, summed;
    the right one's as batch, summed, columns (batch, row and column axes in the result's
    order, the summed ones in the left operand's)."""
    identity = tuple(tuple(range(len(axes))) for axes in operand_axes)
    if not transposed:
        return [identity]
    if len(operand_axes) != 2 or any(a.stride or len(a.vars) != 1 for axes in operand_axes for a in axes):
        return []
    left, right = ([a.vars[0] for a in axes] for axes in operand_axes)
    if len(set(left)) != len(left) or len(set(right)) != len(right):
        return []
    if set(left) | set(right) != set(free) | set(reduced):
        return []
    summed = [v for v in left if v in reduced]
    if set(summed) != set(reduced) or not set(summed) <= set(right):
        return []
    batch = [v for v in free if v in left and v in right]
    rows, columns = [v for v in free if v not in right], [v for v in free if v not in left]
    orders = (tuple(left.index(v) for v in batch + rows + summed),
              tuple(right.index(v) for v in batch + summed + columns))
    return [] if orders == identity else [orders]


def _window_readings(candidates: list) -> list:
    """Every choice of reading for the window axes (stride * y + dilation * p, either way)."""
    choices = [[]]
    for axes in candidates:
        options = [[]]
        for a in axes:
            options = [o + [r] for o in options for r in (a if isinstance(a, list) else [a])]
        choices = [c + [o] for c in choices for o in options]
    return choices


def _bind(pattern: Pattern, sequences: list, reduced: set) -> Optional[Match]:
    out, operands = sequences[0], sequences[1:]
    letters: dict[str, tuple] = {}
    strides, dilations = [], []

    def unify(letter: str, vars_: tuple) -> bool:
        return letters.setdefault(letter, vars_) == vars_

    if len(pattern.out.split()) != len(out):
        return None
    if not all(unify(c, a.vars) for c, a in zip(pattern.out.split(), out)):
        return None
    for tokens, axes in zip(pattern.operands, operands):
        tokens = tokens.split()
        if len(tokens) != len(axes):
            return None
        for token, axis in zip(tokens, axes):
            if "+" in token:
                y, p = token.split("+")
                if not axis.stride or not (unify(y, axis.vars[:1]) and unify(p, axis.vars[1:])):
                    return None
                strides.append(axis.stride)
                dilations.append(axis.dilation)
            elif axis.stride or not unify(token, axis.vars):
                return None
    bound = [v for vars_ in letters.values() for v in vars_]
    summed = {v for c, vars_ in letters.items() if c not in pattern.out for v in vars_}
    if len(bound) != len(set(bound)) or summed != reduced:
        return None
    if not pattern.strided and any(s != 1 for s in strides + dilations):
        return None
    return Match(pattern, (), out, operands, strides, dilations)


# ------------------------------------------------------------------------------ what was emitted

WINDOW_OPS = ("conv_", "depthwise_conv_", "pooling_")
# The target's own forms of an op that take every run-time size at fixed-size speed
# (DenseKernel.form; einc.ir.explain words each): a pooling as one pass over its window's
# shifted slices (cpu_poolings), one whose rows are read as pairs of columns (pooling_pairs), a
# convolution as a matmul over its windows copied out as rows, or as its filter times its windows
# copied straight into the matmul's packed operand (window_matmuls), fused attention over its
# fixed keys padded to whole vector steps (attention); a window over an image with no batch or
# channel axis, which linalg has no op for, written out as a pooling is (cpu_poolings).
WRITTEN_OUT, PAIRS, WINDOWS_MATMUL = "written out", "over pairs of columns", "a matmul over its windows"
BARE_WRITTEN_OUT = "written out, no op"
PACKED_WINDOWS, PADDED_KEYS = "a matmul by its packed windows", "over keys padded to whole steps"
FORMS = (WRITTEN_OUT, BARE_WRITTEN_OUT, PAIRS, WINDOWS_MATMUL, PACKED_WINDOWS, PADDED_KEYS)


@dataclass(frozen=True)
class DenseKernel:
    """A reduction as the lowering emitted it, for `einc build --explain`: a named op, or
    ("generic") a loop nest only because some of its reads (`unproven`, their places) are not
    proven inside their axes, which the named op `would_be` needs. Sizes are run-time sizes
    (named dims, `?` axes as INPUT.AXIS, lengths computed from data): every one its shapes
    depend on, and those of its axes other than a window op's batch (`slow_sizes`: IREE 3.13
    tiles a window op for a run-time batch as for a fixed one, not for other run-time axes).
    `blocks`: what einc cut into blocks of build-time size for those axes (cpu_convolutions);
    `fast_sizes`: run-time sizes of axes other than the batch that the target's own form takes
    at fixed-size speed (a 2-d convolution's input channels on llvm-cpu); `form`: one of FORMS,
    the target's own form of the op, which takes every run-time size at fixed-size speed, or ""
    (the op, on `blocks` where there are any)."""
    op: str
    span: object
    run_time_sizes: tuple
    slow_sizes: tuple
    unproven: tuple = ()
    would_be: str = ""
    blocks: tuple = ()
    fast_sizes: tuple = ()
    form: str = ""

    @property
    def is_window(self) -> bool:
        return (self.would_be or self.op).startswith(WINDOW_OPS)


def dense_kernel(found: Match, span, unproven: tuple = (), blocks: tuple = (),
                 fast_letters: frozenset = frozenset(), form: str = "") -> DenseKernel:
    """The record of `found` emitted (on `blocks`, or in `form`, one of FORMS), or with
    `unproven` reads a loop nest instead. A window op's batch, and its axes lettered in
    `fast_letters` (those the target's own form takes at run time at fixed-size speed), are not
    slow sizes; an op in one of FORMS has none."""
    window = found.pattern.op.startswith(WINDOW_OPS)
    fast = ({"n"} | set(fast_letters)) if window else set()
    lettered = [(found.pattern.out, found.out)] + list(zip(found.pattern.operands, found.operand_axes))
    unslowed = {v: letter for letters, axes in lettered for letter, axis in zip(letters.split(), axes)
                if letter in fast for v in axis.vars}
    axes = [v for a in found.out for v in a.vars] + [v for axes in found.operand_axes for a in axes for v in a.vars]
    sizes = run_time_sizes([v.extent for v in axes] + [size for view in found.views for size in view.shape])
    slow = () if form else run_time_sizes([v.extent for v in axes if v not in unslowed])
    if unproven:
        return DenseKernel("generic", span, sizes, slow, unproven, found.pattern.op)
    fast_sizes = run_time_sizes([v.extent for v, letter in unslowed.items() if letter != "n"])
    return DenseKernel(found.pattern.op, span, sizes, slow, blocks=blocks, fast_sizes=fast_sizes,
                       form=form)


def unproven_kernel(reduce: Reduce, free: list[IndexVar], target: str) -> Optional[DenseKernel]:
    """The record of a reduction over run-time sizes that stays a loop nest only because some
    of its reads are not proven inside their axes: with them proven it would be a named op on
    `target` (None for any other reduction)."""
    reads = _unproven_reads(reduce.body)
    if not reads:
        return None
    try:
        for read in reads:       # as if proven: the one fact a named op's operands lack here
            read.in_bounds = True
        found = match(reduce, free)
    finally:
        for read in reads:
            read.in_bounds = False
    if found is None or not emitted_on(target, found):
        return None
    return dense_kernel(found, reduce.span, tuple(r.span for r in reads))


def _unproven_reads(body: Value) -> list[Read]:
    """The reads in `body` (not in the tensors they read) that no pass proved in bounds; each
    shared node is visited once."""
    found, todo, seen = [], [body], set()
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Read):
            found += [] if node.in_bounds else [node]
            todo.extend(node.subs)
        else:
            todo.extend(node.operands())
    return found


def run_time_sizes(extents: list[Lin]) -> tuple:
    names: dict = {}
    while extents:
        for key in extents.pop(0).terms:
            if isinstance(key, Quotient):
                extents.append(key.numer)
            elif isinstance(key, SizeOp):
                extents.extend(key.args)
            elif isinstance(key, Sym):
                names[key.name] = None
    return tuple(names)


# ------------------------------------------------------------------------------ emission

def emit(lw, found: Match, init: ir.Value, build: Optional[Callable] = None,
         given: Optional[dict] = None) -> Optional[ir.Value]:
    """The named op over `init` (the result's identity-filled tensor, axes as in `free`); None
    when an operand is not a device tensor. `build(ins, out)`, where given, computes the op's
    result from its operands and identity-filled output in another way (cpu_matmuls), `given`
    holding operands (by position) it made itself instead of reading their views."""
    pattern = found.pattern
    if found.written_out_only and build is None:
        return None                 # no linalg op computes it: the reduction stays a generic
    perms = found.perms or (None,) * len(found.views)
    given = given or {}
    # IREE-09: a barrier keeps the producers of a batch_matmul's operands out of its dispatch
    fenced = pattern.op == "batch_matmul" and lw.target.has_defect("IREE-09")
    early = [fenced and k not in given and _views_fuse_into_encoding(lw.target, view, perm)
             for k, (view, perm) in enumerate(zip(found.views, perms))]
    operand_views.fence_sources(lw, [view for view, e in zip(found.views, early) if e])
    kept = frozenset(v for axis in found.out for v in axis.vars)
    ins = [given[k] if k in given else _operand(lw, view, axes, perm, early[k], kept)
           for k, (view, axes, perm) in enumerate(zip(found.views, found.operand_axes, perms))]
    if any(t is None for t in ins):
        return None
    ins = [fence(lw.target, v) if fenced and not e and k not in given and not is_fenced(v) else v
           for k, (v, e) in enumerate(zip(ins, early))]
    if len(ins) == 1:     # pooling: the window's sizes come from a shape-only operand
        ins.append(_window(lw, found))
    op_init = _identity_as_op_writes(found, init) if found.result_order else init
    out = _collapse(op_init, found.out)
    if build is not None:
        result = build(ins, out)
    else:
        kwargs = {"strides": found.strides, "dilations": found.dilations} if pattern.strided else {}
        result = getattr(linalg, pattern.op)(*ins, outs=[out], **kwargs)
    result = _expand(lw, result, op_init, found.out)
    if not found.result_order:
        return result
    back = [found.result_order.index(k) for k in range(len(found.result_order))]
    return linalg.transpose(result, outs=[_empty_permuted(result, back)], permutation=back).results[0]


def _views_fuse_into_encoding(target: Target, view: View, perm: Optional[tuple]) -> bool:
    """Whether a batch_matmul operand may pass its barrier before its view (fence_sources).
    IREE-51: a split and transpose moving an axis of run-time size, fused into the encoding of
    the operand, fail to compile; so only the leading axis may be of run-time size, kept first."""
    if not target.has_defect("IREE-51"):
        return True
    return (perm is None or perm[0] == 0) and all(d.is_const for d in view.shape[1:])


def _operand(lw, view: View, axes: list[Axis], perm: Optional[tuple], fenced: bool = False,
             kept: frozenset = frozenset()) -> Optional[ir.Value]:
    """The view as the op reads it, its axes in the op's order (`perm`) and its runs collapsed;
    a run that is exactly an axis the view split (a flattened subscript read by a contraction)
    is that axis, unsplit. `fenced`: a computed tensor is read behind its barrier (fence_sources);
    `kept`: the variables the result keeps (the others are summed)."""
    if perm is None and view.splits and _groups(axes) == operand_views.split_groups(view.splits):
        view = replace(view, splits=())
        return view_tensor(lw, view, fenced)
    value = view_tensor(lw, view, fenced)
    if value is None:
        return None
    if lw.target.has_defect("IREE-45") and any(k is not None and not k.is_const for k in view.keep):
        value = fence(lw.target, value)    # IREE-45: a run-time prefix beside a computed operand, unbounded stack
    if lw.target.has_defect("IREE-49") and not isinstance(view.read.tensor, (Input, Const)):
        value = fence(lw.target, value)    # IREE-49: a computed operand fused into the op's dispatch, wrong values
    value = value if perm is None else _transpose(lw, value, view, perm)
    collapsed = _collapse(value, axes)
    if lw.target.has_defect("IREE-07") and not isinstance(value.owner, ir.Block) \
            and _sums_a_run_of_run_time_extent(axes, kept):
        return fence(lw.target, collapsed)  # IREE-07: else data tiling fuses the collapse and fails to compile
    if lw.target.has_defect("IREE-77") and not isinstance(value.owner, ir.Block) \
            and _sums_over_run_time_extent(axes, kept):
        return fence(lw.target, collapsed)  # IREE-77: else data tiling fuses its producer and fails to compile
    return collapsed


def _sums_over_run_time_extent(axes: list[Axis], kept: frozenset) -> bool:
    """Whether an operand is summed over a variable of run-time extent (`sum[j](p[i, j] * v[j,
    d])` with p computed and J named)."""
    return any(v not in kept and not v.extent.is_const for a in axes if not a.stride for v in a.vars)


def _sums_a_run_of_run_time_extent(axes: list[Axis], kept: frozenset) -> bool:
    """Whether an operand has a run of variables collapsed into one axis and is summed over an
    axis of run-time extent, that run or another (a batch of heads the result keeps, summed
    over a constant extent, is not)."""
    runs = [a for a in axes if len(a.vars) > 1 and not a.stride]
    return bool(runs) and any(a.vars[0] not in kept and any(not v.extent.is_const for v in a.vars)
                              for a in axes)


def _transpose(lw, value: ir.Value, view: View, perm: tuple) -> ir.Value:
    shape = [view.shape[k] for k in perm]
    init = lw.sizes.empty(tuple(shape), ir.RankedTensorType(value.type).element_type)
    return linalg.transpose(value, outs=[init], permutation=list(perm)).results[0]


def _identity_as_op_writes(found: Match, init: ir.Value) -> ir.Value:
    """The reduction's identity in a tensor of `init`'s axes in the op's `result_order`."""
    dtype = found.views[0].read.dtype
    identity = scalar_ops.constant(dtype, reduction_identity(found.pattern.kind, dtype))
    return linalg.fill(identity, outs=[_empty_permuted(init, found.result_order)])


def _empty_permuted(value: ir.Value, perm) -> ir.Value:
    """An empty tensor of `value`'s axes taken in the order `perm`."""
    source = ir.RankedTensorType(value.type)
    sizes = [tensor.dim(value, index_const(k)) if source.get_dim_size(k) == DYNAMIC else source.get_dim_size(k)
             for k in perm]
    return tensor.empty(sizes, source.element_type)


def _groups(axes: list[Axis]) -> list[list[int]]:
    groups, k = [], 0
    for a in axes:
        width = 1 if a.stride else len(a.vars)
        groups.append(list(range(k, k + width)))
        k += width
    return groups


def _window(lw, found: Match) -> ir.Value:
    sizes = [a.vars[1].extent for a in found.operand_axes[0] if a.stride]
    return lw.sizes.empty(tuple(sizes), element_type(found.views[0].read.dtype))


def _collapse(value: ir.Value, axes: list[Axis]) -> ir.Value:
    groups = _groups(axes)
    if all(len(g) == 1 for g in groups):
        return value
    source = ir.RankedTensorType(value.type)
    dims = []
    for g in groups:
        sizes = [source.get_dim_size(d) for d in g]
        dims.append(DYNAMIC if DYNAMIC in sizes else _product(sizes))
    return tensor.collapse_shape(ir.RankedTensorType.get(dims, source.element_type), value, groups)


def _expand(lw, value: ir.Value, like: ir.Value, axes: list[Axis]) -> ir.Value:
    groups = _groups(axes)
    if all(len(g) == 1 for g in groups):
        return value
    shape = tuple(v.extent for a in axes for v in a.vars)
    static = [d.const if d.is_const else DYNAMIC for d in shape]
    return tensor.expand_shape(like.type, value, groups, lw.sizes.dynamic_dims(shape), static)


def _product(sizes: list[int]) -> int:
    out = 1
    for s in sizes:
        out *= s
    return out
