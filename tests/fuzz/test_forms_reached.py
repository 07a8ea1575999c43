"""The differential fuzzers reach the lowering forms that only their own tests covered: programs
built with their named dims fixed (`--dim`, multiples of 16 among the sizes: IREE-42 was reachable
only so), convolutions over non-overlapping windows (a matmul of patches,
einc/mlir/dense/patch_matmuls.py), poolings read as pairs of columns (pooling_pairs.py), recurrences whose small fixed tensor states are held in
registers and independent series run as lane blocks (einc/mlir/recurrences). Each test finds
the form in what the generator made (its structure, or `einc build --explain` of the program)
and checks a few such programs against their NumPy meaning."""
from __future__ import annotations

import os
import re

import pytest

from einc import driver
from fuzz.dense.campaign import DenseDifferential
from fuzz.dense.generate import generate_case as dense_case
from fuzz.campaigns import campaign
from fuzz.dense.spec import Read, render_dense
from fuzz.programs.campaign import Differential, runs_on
from fuzz.programs.generate import generate_case
from fuzz.programs.module import assemble
from fuzz.programs.render import literals_typed_by_other_clauses
from fuzz.programs.structure import (Binary, Define, Group, Index, RowMap, RowMatch, StepTensor, item_exprs,
                                     program_exprs, walk)
from fuzz.programs.structure import Read as ProgramRead
from fuzz.workers import Pool
from tests.fuzz.stream_draws import drawn_case
from tests.fuzz.test_sample import SEED as SAMPLE_SEED
from tests.tiers import VULKAN_FULL, by_tier

SEED = 5
DENSE_SEED = 4                 # its first 20 programs hold both layouts, batches of 1, 2, 3 and run-time
PADDED_SEED = 9                # programs 31 and 47: fused attention over 2 fixed keys, a run-time batch
TARGETS = ["llvm-cpu", VULKAN_FULL]


def _explain(tmp_path, module, target: str = "llvm-cpu") -> str:
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as file:
        file.write(module.source)
    return driver.emit_program(path, "explain", list(module.outputs), target=target, dims=module.dims or None)


def _run(campaign, keys: list, target: str, seed: int = SEED):
    """`keys` agree with their meaning on `target` (the first two in the fast tier)."""
    keys = keys[:by_tier(2, len(keys))]
    with Pool(2) as pool:
        report = campaign(seed, pool, (target,), 12, lambda _: None).run(keys)
    assert not report.bad, report.format()
    assert report.counts[f"programs checked on {target}"] == len(keys)


# ------------------------------------------------------------------ item: `--dim`-fixed sizes

@pytest.mark.parametrize("target", TARGETS)
def test_programs_built_with_fixed_sizes_multiples_of_16_match_numpy(target):
    cases = {k: generate_case(SEED, k) for k in range(60)}
    fixed = [k for k, c in cases.items() if c.program.fixed and runs_on(c, target)]
    sixteens = [k for k in fixed if any(v % 16 == 0 for _, v in cases[k].program.dims)]
    assert sixteens, "no program with a fixed size that is a multiple of 16"
    keys = fixed[:4]
    module = assemble({k: cases[k].program for k in keys})
    assert module.dims == {f"p{k}_{d}": v for k in keys for d, v in cases[k].program.dims}
    _run(Differential, keys, target)


# ------------------------------------------------------------------ item: convolutions of patches

def _patch_convolutions(tmp_path, limit: int) -> dict:
    """Case number -> the source lines of its convolutions that einc emits as a matmul."""
    found = {}
    for k in range(limit):
        case = dense_case(DENSE_SEED, k)
        module = assemble({0: case.program}, render_dense)
        lines = module.source.splitlines()
        text = _explain(tmp_path, module)
        convs = [lines[int(n) - 1] for n in re.findall(r"^  matmul at \S+?:(\d+):", text, re.M)]
        convs = [line for line in convs if "kw" in line]        # the window index of every convolution
        if convs:
            found[k] = convs
    return found


def test_the_dense_fuzzer_makes_convolutions_that_become_matmuls_of_patches(tmp_path):
    found = _patch_convolutions(tmp_path, 20)
    lines = [line for convs in found.values() for line in convs]
    assert any("c]" in line for line in lines), "no channels-last convolution of patches"      # NHWC
    assert any(re.search(r"\[n, c, ", line) for line in lines), "no channels-first one"       # NCHW
    _run(DenseDifferential, sorted(found)[:4], "llvm-cpu", DENSE_SEED)


def test_the_dense_fuzzer_makes_convolutions_that_run_as_matmuls_over_their_windows(tmp_path):
    """Deep convolutions (summed depth of 64 or more) run as a register-tiled matmul over a copy
    of their windows on llvm-cpu (einc/mlir/dense/window_matmuls.py): the generator makes such
    convolutions, and they match their NumPy meaning."""
    found = []
    for k in range(20):
        module = assemble({0: dense_case(DENSE_SEED, k).program}, render_dense)
        if "as a matmul over its windows" in _explain(tmp_path, module):
            found.append(k)
    assert found, "no convolution run as a matmul over its windows"
    _run(DenseDifferential, found[:3], "llvm-cpu", DENSE_SEED)


# ------------------------------------------------------------------ item: epilogues taken into window ops

# an elementwise op computed in the branches of a convolution's width choice (block_epilogues);
# a written-out channels-last pooling on einc's tiles (pooling_rows)
IN_BLOCKS = re.compile(r"linalg\.conv_\w+ [^\n]*\n(?:(?!\s*scf\.yield)[^\n]*\n)*?\s*%\S+ = linalg\.generic")
ON_ROWS = re.compile(r"vector_common_parallel = \[[1, ]*(?:64|8, 16)\]")


def _lowered(tmp_path, module) -> str:
    path = os.path.join(tmp_path, "program.ein")
    with open(path, "w", encoding="utf-8") as file:
        file.write(module.source)
    return str(driver.lower(path, "llvm-cpu", list(module.outputs), module.dims or None))


def _window_steps(program) -> bool:
    """Whether `program` has a window op (a reduction over kernel loops) with elementwise steps."""
    return any(d.steps and not isinstance(d.value, Read) and any(l.name.startswith("k") for l in d.value.loops)
               for d in program.definitions)


@pytest.mark.parametrize("seed, limit, form", [(4, 10, ON_ROWS), (5, 90, IN_BLOCKS)])
def test_the_dense_fuzzer_makes_window_ops_whose_epilogue_runs_with_them(tmp_path, seed, limit, form):
    """A convolution over a run-time width with an elementwise step runs it in each block
    (einc/mlir/dense/block_epilogues.py); a channels-last pooling over a run-time window axis
    runs on rows, its step taken in (pooling_rows.py): the generator makes both, and they match
    their NumPy meaning."""
    found = []
    for k in range(limit):
        program = dense_case(seed, k).program
        if _window_steps(program) and form.search(_lowered(tmp_path, assemble({0: program}, render_dense))):
            found.append(k)
            break
    assert found, f"no such window op among the first {limit} programs of seed {seed}"
    _run(DenseDifferential, found, "llvm-cpu", seed)


# ------------------------------------------------------------------ item: poolings read as pairs

@pytest.mark.full
def test_the_dense_fuzzer_makes_poolings_read_as_pairs(tmp_path):
    """A channels-first pooling whose columns are 2x2's 2 apart reads its image as i64 pairs on
    llvm-cpu (einc/mlir/dense/pooling_pairs.py; fuzz/dense/windows.py `pair_axis`): the generator
    makes such poolings, at a build-time width and at a run-time one (an `scf.if` on the
    width's parity), and they match their NumPy meaning."""
    fixed, run_time = [], []
    for k in range(360):
        module = assemble({0: dense_case(DENSE_SEED, k).program}, render_dense)
        if "kw in 0..2" not in module.source:
            continue
        text = _lowered(tmp_path, module)
        if "flow.tensor.bitcast" in text:
            (run_time if re.search(r"flow\.tensor\.bitcast %\S+ : tensor<[?x\d]*\?xf32>", text) else fixed).append(k)
    assert fixed and run_time, (fixed, run_time)
    _run(DenseDifferential, fixed[:1] + run_time[:1], "llvm-cpu", DENSE_SEED)


# ------------------------------------------------------------------ item: reductions beside a contraction

def test_the_dense_fuzzer_adds_row_reductions_to_batch_matmuls_of_run_time_size():
    """IREE-53 needed a batch matmul of run-time size whose result is combined with a reduction
    of another tensor (`+ max[r](q[n, i, r])`): the generator writes such steps, and a few
    programs holding them match their NumPy meaning."""
    found = []
    for k in range(300):
        program = dense_case(5, k).program
        if any(len(d.loops) == 3 and any(s.op == "add_reduced" for s in d.steps) for d in program.definitions) \
                and any(not size.static for i in program.inputs for size in i.shape):
            found.append(k)
    assert found, "no batch matmul of run-time size beside a row reduction"
    _run(DenseDifferential, found[:3], "llvm-cpu", 5)


# ------------------------------------------------------------------ item: recurrence forms

def _forms(tmp_path, limit: int) -> dict:
    """Case number -> its groups' forms on llvm-cpu, as `einc build --explain` names them."""
    forms = {}
    for k in range(limit):
        case = generate_case(SEED, k)
        if any(isinstance(i, Group) and len(i.members[0].clauses[0].slots) > 1 for i in case.program.items):
            text = _explain(tmp_path, assemble({k: case.program}))
            forms[k] = ("held" if "small tensor states held in registers" in text else "") + \
                       ("lanes" if "each block of batch lanes runs every step" in text else "")
    return forms


@pytest.mark.full
def test_the_program_fuzzer_makes_held_states_and_lane_blocks(tmp_path):
    forms = _forms(tmp_path, 60)
    held = [k for k, f in forms.items() if "held" in f]
    lanes = [k for k, f in forms.items() if "lanes" in f]
    assert held and lanes, forms
    _run(Differential, held[:2] + lanes[:2], "llvm-cpu")


# ------------------------------------------------------------------ bool recurrence states

@pytest.mark.parametrize("target", TARGETS)
def test_the_program_fuzzer_makes_bool_recurrence_states_that_match_numpy(target):
    # a running any, a cell of an automaton: a bool member inside a dispatch failed to compile
    # (IREE-80, tests/e2e/test_recurrences.py)
    cases = {k: generate_case(SEED, k) for k in range(120)}
    keys = [k for k, c in cases.items() if runs_on(c, target) and any(
        isinstance(i, Group) and any(m.dtype == "bool" for m in i.members) for i in c.program.items)]
    assert len(keys) >= 3, keys
    _run(Differential, keys[:3], target)


@pytest.mark.full
@pytest.mark.parametrize("target", TARGETS)
def test_the_program_fuzzer_makes_step_tensors_reading_every_earlier_step(target):
    # `let h[q in 0..n] = .. if q < t { x[q, ..] } else { .. } ..;` in x's step: the member's
    # whole history, read at the tensor's own index (E011 before; tests/e2e/test_recurrences.py)
    # (vulkan-spirv runs fewer of them since programs draw 16- and 64-bit integer types: 2 of the
    # first 300, at 125 and 288)
    cases = {k: drawn_case(SEED, k) for k in range(300)}
    keys = [k for k, c in cases.items() if runs_on(c, target) and any(
        isinstance(m, Binary) and m.op == "<" and m.left == Index(n.var) and m.right == Index("t")
        for e in program_exprs(c.program) for n in walk(e) if isinstance(n, StepTensor) for m in walk(n.body))]
    assert len(keys) >= (3 if target == "llvm-cpu" else 2), keys
    _run(Differential, keys[:3], target)


@pytest.mark.full
def test_the_program_fuzzer_guards_bool_reads_with_and_or_that_match_numpy():
    # `i >= 1 && r[i - 1] || !(i >= 1) && c`: the read counts only where `&&` lets it run (it
    # was E005 outside an `if`; tests/e2e/test_indexed.py)
    seed = 7
    keys = [k for k in range(250) if runs_on(case := generate_case(seed, k), "llvm-cpu") and any(
        isinstance(n, Binary) and n.op == "&&" and isinstance(n.right, ProgramRead) and n.right.dtype == "bool"
        for e in program_exprs(case.program) for n in walk(e))]
    assert len(keys) >= 2, keys
    _run(Differential, keys[:2], "llvm-cpu", seed)


# ------------------------------------------------------------------ array patterns on rows

def test_the_program_fuzzer_makes_array_patterns_on_rows():
    # `match x[i] { [a, ..r, b] => .. }` inside indexed definitions: a rest bound from a row of
    # an enclosing definition was E011 (tests/e2e/test_patterns.py). The fixed-seed sample of
    # tests/fuzz/test_sample.py runs these programs against their meaning, so they are not
    # built again here.
    sample = campaign("programs").sample
    keys = [k for k in range(sample) if any(isinstance(n, RowMatch) and n.rest
                                            for i in generate_case(SAMPLE_SEED, k).program.items
                                            for e in item_exprs(i) for n in walk(e))]
    assert len(keys) >= 3, keys


# ------------------------------------------------------------------ whole-array reductions of rows

def test_the_program_fuzzer_reduces_rows_whole_with_the_prelude_and_matches_numpy():
    # `fn r_row(row: [T; n]) -> T { max(row * 2.0) }` applied to the rows of an array: the
    # prelude's sum/min/max of a row expression inside a comprehension was E011 ("a sub-array
    # used whole inside an indexed definition"); a few such programs run against their meaning.
    cases = {k: generate_case(SEED, k) for k in range(80)}
    keys = [k for k, c in cases.items() if runs_on(c, "llvm-cpu")
            and any(isinstance(i, RowMap) and i.whole for i in c.program.items)]
    assert len(keys) >= 3, keys
    _run(Differential, keys[:3], "llvm-cpu")


# ------------------------------------------------------------------ item: literals chosen at run time

def _literal_choices(program) -> list:
    """The definitions of a type other than f32 with a clause that is a choice of untyped literals
    by a run-time condition, written unsuffixed beside a clause typed by what it reads."""
    found = []
    for item in program.items:
        defines = item.members if isinstance(item, Group) else [item] if isinstance(item, Define) else []
        own = {d.name for d in defines} if isinstance(item, Group) else None
        found += [d for d in defines if d.dtype in ("f64", "f16", "bf16") and any(
            literals_typed_by_other_clauses(d, k, own or {d.name}) for k in range(len(d.clauses)))]
    return found


def test_the_program_fuzzer_makes_literals_chosen_at_run_time_in_f64_and_f16_definitions():
    cases = {k: generate_case(SEED, k) for k in range(30)}
    keys = [k for k, c in cases.items() if _literal_choices(c.program) and runs_on(c, "llvm-cpu")]
    types = {d.dtype for k in keys for d in _literal_choices(cases[k].program)}
    assert {"f64", "f16"} <= types, types
    _run(Differential, keys[:6], "llvm-cpu")


# ------------------------------------------------------------------ item: fused attention

def test_the_dense_fuzzer_makes_softmax_attention_that_runs_fused(tmp_path):
    """Softmax attention written out (einc/mlir/dense/attention.py) becomes one fused kernel on
    llvm-cpu: the generator makes such programs, some with the row maximum or sum written inline,
    near misses that stay as written beside them, and all match their NumPy meaning."""
    fused, inline, missed = [], [], []
    for k in range(120):
        case = dense_case(DENSE_SEED, k)
        if not any(s.op == "exp" for d in case.program.definitions for s in d.steps):
            continue
        module = assemble({0: case.program}, render_dense)
        explained = _explain(tmp_path, module)
        (fused if "fused attention" in explained else missed).append(k)
        if "fused attention" in explained and re.search(r"- max\[u|/ sum\[u", module.source):
            inline.append(k)
    assert fused, "no attention fused"
    assert inline, "no attention with its row maximum or sum inline fused"
    assert missed, "no near miss of attention"
    _run(DenseDifferential, sorted(set(fused[:3] + inline[:1])) + missed[:1], "llvm-cpu", DENSE_SEED)


def test_the_dense_fuzzer_makes_attention_over_keys_padded_to_whole_steps(tmp_path, monkeypatch):
    """On a host whose masked vector steps are slow (AVX2, IREE-195) a fused attention over a
    fixed key count that is not a whole number of its 32-key steps runs over keys padded with
    masked zeros: the generator makes such programs (2, 5, 13, 17 or 33 keys), and they match their
    NumPy meaning on this host's llvm-cpu, padded or not."""
    from einc import host_cpu
    monkeypatch.setattr(host_cpu, "vector_unit", lambda: "avx2")
    padded = []
    for k in range(50):
        case = dense_case(PADDED_SEED, k)
        if any(s.op == "exp" for d in case.program.definitions for s in d.steps):
            explained = _explain(tmp_path, assemble({0: case.program}, render_dense))
            padded += [k] if "over its keys padded to whole vector steps" in explained else []
    monkeypatch.undo()
    assert padded, "no attention over padded keys"
    _run(DenseDifferential, padded[:2], "llvm-cpu", PADDED_SEED)


def _int_literal_choices(program) -> list:
    """(definition, in a recurrence) for each float definition with a clause that chooses among
    int literals (`if x[i] > 0.5 { 1 } else { -3 }`) typed by its other clauses."""
    found = []
    for item in program.items:
        defines = item.members if isinstance(item, Group) else [item] if isinstance(item, Define) else []
        own = {d.name for d in defines} if isinstance(item, Group) else None
        found += [(d, isinstance(item, Group)) for d in defines for k, c in enumerate(d.clauses)
                  if literals_typed_by_other_clauses(d, k, own or {d.name})
                  and getattr(c.body.then, "integral", False)]
    return found


def test_the_program_fuzzer_makes_int_literals_chosen_in_float_definitions_and_recurrence_starts():
    cases = {k: generate_case(SEED, k) for k in range(60)}
    keys = [k for k, c in cases.items() if _int_literal_choices(c.program) and runs_on(c, "llvm-cpu")]
    found = [f for k in keys for f in _int_literal_choices(cases[k].program)]
    assert any(in_recurrence for _, in_recurrence in found), "no recurrence started at a choice of int literals"
    assert {d.dtype for d, _ in found} - {"f32"}, "only f32 definitions"
    _run(Differential, keys[:6], "llvm-cpu")


def _run_time_float_powers(program) -> list:
    """The exponents of float powers that are an index known at run time (`x ** (i % 4)`), or
    that index as a float (`x ** ((i % 4) as f32)`)."""
    return [node.right for expr in program_exprs(program) for node in walk(expr)
            if getattr(node, "op", None) == "**" and node.dtype in ("f32", "f64", "f16", "bf16")
            and getattr(getattr(node.right, "arg", node.right), "op", None) == "%"]


def test_the_program_fuzzer_raises_floats_to_run_time_integral_powers():
    cases = {k: generate_case(SEED, k) for k in range(80)}
    keys = [k for k, c in cases.items() if _run_time_float_powers(c.program) and runs_on(c, "llvm-cpu")]
    exponents = {type(e).__name__ for k in keys for e in _run_time_float_powers(cases[k].program)}
    assert exponents == {"Binary", "Cast"}, exponents
    _run(Differential, keys[:8], "llvm-cpu")


# ------------------------------------------------------------------ item: closures with a result type

def test_piped_lambdas_that_state_their_result_type_match_numpy():
    """Every other piped block is written `(v |> |a| -> f32 { .. })`, Rust's closure with a result
    type (E001 at `->` before it was parsed)."""
    keys = [k for k in range(80) if "| -> " in assemble({k: generate_case(SEED, k).program}).source]
    assert len(keys) >= 3, "no piped lambda with a result type among the first 80 programs"
    _run(Differential, keys[:3], "llvm-cpu")


# ------------------------------------------------------------------ item: a window point left out

SKIP_SEED = 24                 # programs 4, 9, 12 and 26 leave a window point out


def _leaves_a_point_out(case) -> bool:
    return any(getattr(getattr(d, "value", None), "skip", ()) for d in case.program.definitions)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_the_dense_fuzzer_leaves_window_points_out_and_they_match_numpy(target):
    """`max[kh, kw](.. where kh != 1 || kw != 0)`: a guard of the window's own variables, decided
    at build time, which llvm-cpu writes out as the points it keeps (einc/mlir/dense/cpu_poolings)."""
    keys = [k for k in range(30) if _leaves_a_point_out(dense_case(SKIP_SEED, k))]
    assert len(keys) >= 3, keys
    _run(DenseDifferential, keys, target, SKIP_SEED)


# ------------------------------------------------------------------ item: reads clamped into the image

CLAMP_SEED = 1                 # programs 1, 12, 21, .. read their windows clamped into the image


def _reads_clamped(case) -> bool:
    return any(getattr(s, "clamp", None) is not None for d in case.program.definitions
               for r in getattr(getattr(d, "value", None), "reads", ()) for s in r.subs)


@pytest.mark.parametrize("target", ["llvm-cpu", VULKAN_FULL])
def test_the_dense_fuzzer_clamps_window_reads_into_the_image_and_they_match_numpy(target):
    """`X[min(max(h + kh - 1, 0), H - 1), ..]` in place of a padding: llvm-cpu reads a copy of the
    image with its edges replicated (einc/mlir/dense/operand_views.py `clamped_view`)."""
    cases = {k: dense_case(CLAMP_SEED, k) for k in range(30)}
    keys = [k for k, c in cases.items() if _reads_clamped(c) and (target != "vulkan-spirv" or c.program.dtype == "f32")]
    assert len(keys) >= 3, keys
    _run(DenseDifferential, keys, target, CLAMP_SEED)
