"""The pipeline, stage by stage: load + parse → resolve → elaborate to IR → MLIR → IREE.

Each stage raises `CompileError` for mistakes in the program; the error carries the source map
(`.sources`) so the CLI can render the offending lines. Anything else escaping is a compiler bug.
The functions here take a target by name or record (einc.target.get); the stages take the record.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from einc.deep_stack import on_a_deep_stack
from einc.diagnostics import CompileError, OptionError, note_calls
from einc.target import DEFAULT, Target, get as get_target

if TYPE_CHECKING:
    from einc.backend.parameters import Archive

# Constant arrays of this many bytes or more become parameters by default (einc.mlir.weights):
# smaller ones cost less inside the module than as separate parameters.
DEFAULT_THRESHOLD = 256 * 1024


@on_a_deep_stack
def front_end(path: str, outputs: list[str] | None = None, dims: dict[str, int] | None = None,
              allow_python: bool = False, *, unchecked_indices: bool = False, ranks: dict[str, int] | None = None):
    """Parse, resolve and elaborate `path`, then run every pass before lowering; returns
    (loaded program, IR program). `dims` fixes named dims at build time (`--dim`);
    `allow_python` lets `python::mod::f(..)` run during the build (`--allow-python`);
    `unchecked_indices` leaves data-dependent subscripts unchecked (clamped, `--unchecked-indices`);
    `ranks` gives any-rank inputs (`[f32; *]`) a rank (einc.specialize)."""
    from einc.semantics.core.modules import load_program
    fixed_dims = checked_dims(dims)
    return _analysed(_stage(None, load_program, path), outputs, fixed_dims, allow_python, unchecked_indices, ranks)


@on_a_deep_stack
def any_rank_inputs(path: str) -> list[str]:
    """The names of the run-time inputs of `path` declared of any rank (`let x: [f32; *];`),
    read from its parse alone: a caller fixes their ranks (`ranks`) before the front end runs."""
    from einc.semantics.core.modules import load_program
    from einc.syntax import ast
    return [s.pattern.name for s in _stage(None, load_program, path).entry.items
            if isinstance(s, ast.Let) and s.value is None and isinstance(s.pattern, ast.BindPat)
            and isinstance(s.type, ast.ArrayType) and s.type.dims is None]


def _analysed(program, outputs: list[str] | None, fixed_dims: dict[str, int], allow_python: bool = False,
              unchecked_indices: bool = False, ranks: dict[str, int] | None = None):
    from einc.semantics.elaborate import elaborate
    from einc.semantics.core.resolve import resolve

    from einc.passes.read_bounds import mark_reads_in_bounds
    from einc.passes.invariant_work import hoist_invariant_work
    from einc.passes.step_invariant_work import hoist_state_free_step_work
    from einc.passes.shared_values import share_equal_values
    from einc.passes.recurrence_groups import settle_groups
    from einc.passes.step_work import plan_step_work
    from einc.passes.storage import plan_storage
    from einc.passes.size_facts import collect_size_facts
    from einc.passes.index_checks import add_index_checks

    resolution = _stage(program, resolve, program)
    ir_program = _stage(program, elaborate, program, resolution, outputs, fixed_dims, allow_python, ranks)
    hoist_state_free_step_work(ir_program)
    hoist_invariant_work(ir_program)
    share_equal_values(ir_program)
    settle_groups(ir_program)
    if not unchecked_indices:
        add_index_checks(ir_program, program.sources.text)
    plan_storage(ir_program)
    mark_reads_in_bounds(ir_program)
    calls = ir_program.call_chains
    _stage(program, plan_step_work, ir_program, calls=calls)
    ir_program.size_facts = _stage(program, collect_size_facts, ir_program, calls=calls)
    return program, ir_program


@on_a_deep_stack
def check_file(path: str, target: Target | str = DEFAULT, outputs: list[str] | None = None,
               dims: dict[str, int] | None = None, allow_python: bool = False) -> None:
    """`einc check`: a program, or a file of the standard library as the module it is there
    (its `super::` paths only mean something in place)."""
    from einc.semantics.core.modules import library_module, load_source
    module = library_module(path)
    if module is None:
        check_program(path, target, outputs, dims, allow_python)
        return
    use = f"use {'::'.join(module)};\n"
    _analysed(_stage(None, load_source, use, f"<check of {path}>"), None, {})


def check_program(path: str, target: Target | str = DEFAULT, outputs: list[str] | None = None,
                  dims: dict[str, int] | None = None, allow_python: bool = False, *,
                  unchecked_indices: bool = False, ranks: dict[str, int] | None = None):
    """Everything `einc check` runs: the front end and the target's limits, no MLIR, no IREE."""
    from einc.passes.target_support import check_target
    program, ir_program = front_end(path, outputs, dims, allow_python, unchecked_indices=unchecked_indices,
                                    ranks=ranks)
    _stage(program, check_target, ir_program, get_target(target), calls=ir_program.call_chains)
    return program, ir_program


MAX_DIM = 2**31 - 1   # sizes reach kernels as i32


def checked_dims(dims: dict[str, int] | None) -> dict[str, int]:
    """`dims` as given, or OptionError for a size that is not a whole number in [0, 2**31)."""
    for name, size in (dims or {}).items():
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_DIM:
            raise OptionError(f"dim {name} must be fixed to a whole number from 0 to {MAX_DIM}, got {size!r}")
    return dict(dims or {})


def lower(path: str, target: Target | str, outputs: list[str] | None = None, dims: dict[str, int] | None = None,
          allow_python: bool = False, *, fp_contract: bool = False):
    return lower_ir(*front_end(path, outputs, dims, allow_python), target, fp_contract=fp_contract)


@on_a_deep_stack
def lower_ir(program, ir_program, target: Target | str, *, fp_contract: bool = False, weights=None,
             dense_kernels=None, packed_weights=None):
    """The MLIR module of a program the front end already went through; `fp_contract` lets
    llvm-cpu fuse float products into FMAs (einc.mlir.core.rounding); the constants `weights` takes
    become parameters (einc.mlir.weights); `dense_kernels` (a list) receives the named ops
    emitted (einc.mlir.dense.named_ops.DenseKernel); `packed_weights` (a list), per recurrence group,
    the names of the weights its steps read packed."""
    from einc.mlir import lower_program
    _stage(program, _check_runs_something, program, ir_program)
    return _stage(program, lower_program, ir_program, get_target(target), None, fp_contract, weights,
                  dense_kernels, packed_weights, calls=ir_program.call_chains)


def compile_program(path: str, target: Target | str = DEFAULT, outputs: list[str] | None = None,
                    dims: dict[str, int] | None = None, allow_python: bool = False, *,
                    fp_contract: bool = False, unchecked_indices: bool = False) -> bytes:
    return compile_ir(*front_end(path, outputs, dims, allow_python, unchecked_indices=unchecked_indices),
                      target, fp_contract=fp_contract)


def compile_ir(program, ir_program, target: Target | str, *, fp_contract: bool = False) -> bytes:
    """The self-contained .vmfb of a program the front end already went through: every
    constant embedded."""
    return build_ir(program, ir_program, target, fp_contract=fp_contract, weights_threshold=None).vmfb


@dataclass(frozen=True)
class Built:
    """A module and the parameter archive (.irpa) of its external weights (None when none): an
    einc.backend.parameters.Archive in a temporary file."""
    vmfb: bytes
    archive: Archive | None = None


def build_program(path: str, target: Target | str = DEFAULT, outputs: list[str] | None = None,
                  dims: dict[str, int] | None = None, allow_python: bool = False, *,
                  fp_contract: bool = False, weights_threshold: int | None = DEFAULT_THRESHOLD,
                  unchecked_indices: bool = False) -> Built:
    return build_ir(*front_end(path, outputs, dims, allow_python, unchecked_indices=unchecked_indices), target,
                    fp_contract=fp_contract, weights_threshold=weights_threshold)


def build_ir(program, ir_program, target: Target | str, *, fp_contract: bool = False,
             weights_threshold: int | None = DEFAULT_THRESHOLD) -> Built:
    """The module of a program the front end already went through, with its constant arrays of
    at least `weights_threshold` bytes (every one for 0, none for None) in a parameter archive."""
    from einc.backend import compile_mlir, start_compiler
    from einc.backend.parameters import write_archive
    from einc.mlir.signature import record_parameters
    from einc.mlir.weights import Weights
    target, weights = get_target(target), Weights(weights_threshold)
    start_compiler()
    module = lower_ir(program, ir_program, target, fp_contract=fp_contract, weights=weights)
    if not weights.arrays:
        return Built(compile_mlir(module, target))
    archive = write_archive(weights.arrays)
    record_parameters(module, archive.digest)
    return Built(compile_mlir(module, target), archive)


def specialized_build(path: str, target: Target | str, outputs: list[str] | None, dims: dict[str, int] | None,
                      allow_python: bool, cache, sizes_of: Callable, log: Callable[[str], None] = lambda message: None,
                      *, ranks_of: Callable = lambda names: {}, **options):
    """`cached_build` with the named dims `sizes_of(signature)` gives fixed as well (einc.specialize):
    `signature` is what the program's `main` takes, read from the front end before any build.
    A dim it leaves out stays a run-time size; without any, the module is the generic one.
    `ranks_of(names)` gives the ranks of the any-rank inputs `names` (those it leaves out stay
    E011), read before the front end runs."""
    from einc.specialize import describe_sizes, input_signature
    target = get_target(target)
    any_rank = any_rank_inputs(path)
    ranks = ranks_of(any_rank) if any_rank else {}
    analysed = check_program(path, target, outputs, dims, allow_python,
                             unchecked_indices=options.get("unchecked_indices", False), ranks=ranks)
    sizes = sizes_of(input_signature(analysed[1]))
    if not sizes:
        return cached_build(path, target, outputs, dims, allow_python, cache, log, analysed=analysed, ranks=ranks,
                            **options)
    log(f"specialized to the sizes of the inputs: {describe_sizes(sizes)}")
    return cached_build(path, target, outputs, {**(dims or {}), **sizes}, allow_python, cache, log, ranks=ranks,
                        **options)


def cached_build(path: str, target: Target | str, outputs: list[str] | None, dims: dict[str, int] | None,
                 allow_python: bool, cache, log: Callable[[str], None] = lambda message: None, *,
                 fp_contract: bool = False, unchecked_indices: bool = False,
                 weights_threshold: int | None = DEFAULT_THRESHOLD, analysed=None,
                 ranks: dict[str, int] | None = None):
    """The path of the sealed module of `path` in `cache` (an einc.backend.cache.ModuleCache),
    built and stored there unless it is there already. A hit runs the front end (tens of ms) to
    learn the key, but neither the lowering nor IREE; `analysed` is its result when the caller
    has it already. `ranks` gives any-rank inputs a rank (a part of the key). OSError: a file the
    key reads cannot be read; CacheWriteError: the cache cannot take the module."""
    from einc.backend.cache import cache_key
    target = get_target(target)
    program, ir_program = analysed or check_program(path, target, outputs, dims, allow_python,
                                                    unchecked_indices=unchecked_indices, ranks=ranks)
    key = cache_key(program.sources.items(), ir_program.data_files, target, outputs, checked_dims(dims),
                    allow_python, ir_program.python_results, fp_contract, unchecked_indices, weights_threshold,
                    ranks or {})
    found = cache.lookup(key)
    if found is not None:
        log(f"cache hit for {path}: {found}")
        return found
    log(f"cache miss for {path}: building for {target.name} into {cache.path(key)}")
    built = build_ir(program, ir_program, target, fp_contract=fp_contract, weights_threshold=weights_threshold)
    return cache.store(key, built.vmfb, built.archive)


def emit_program(path: str, what: str, outputs: list[str] | None = None,
                 target: Target | str = DEFAULT, dims: dict[str, int] | None = None,
                 allow_python: bool = False, *, fp_contract: bool = False,
                 unchecked_indices: bool = False) -> str:
    """The intermediate form `what` of `path`; MLIR is the one built for `target`, since the
    lowering of recurrences differs per target."""
    target = get_target(target)
    if what == "ast":
        from einc.semantics.core.modules import load_program
        from einc.syntax.dump import format_module
        return format_module(_stage(None, load_program, path).entry)
    if what == "ir":
        from einc.ir.printer import format_program
        return format_program(front_end(path, outputs, dims, allow_python, unchecked_indices=unchecked_indices)[1])
    if what == "mlir":
        return str(lower_ir(*front_end(path, outputs, dims, allow_python, unchecked_indices=unchecked_indices),
                            target, fp_contract=fp_contract))
    if what == "iree-flags":
        from pathlib import Path
        stem = Path(path).stem
        from einc.host_cpu import vector_unit
        return target.iree_compile_command(f"{stem}.mlir", f"{stem}.vmfb", vector_unit()) + "\n"
    if what == "explain":
        from einc.ir.explain import explain_program
        from einc.mlir.kernel_census import kernel_lines
        from einc.mlir.recurrences.forms import choose_form
        program, ir_program = front_end(path, outputs, dims, allow_python, unchecked_indices=unchecked_indices)
        forms = [choose_form(g, target).explain() for g in ir_program.recurrences]
        dense: list = []     # what the lowering emits for the dense reductions: built, not guessed
        packed: list = []    # and the weights each group's steps read packed
        module = lower_ir(program, ir_program, target, fp_contract=fp_contract, dense_kernels=dense,
                          packed_weights=packed)
        return explain_program(ir_program, target.name, forms, unchecked_indices, dense, kernel_lines(module),
                               packed)
    raise ValueError(f"unknown form {what!r}")


def _check_runs_something(program, ir_program) -> None:
    """A module needs an output or a run-time effect: an empty program, or one of functions only
    (a library, which `einc check` accepts), would build a module that does nothing."""
    if ir_program.outputs or ir_program.effects:
        return
    from einc.diagnostics import VALUE, Span, error
    raise error(VALUE, "the program has no output and no run-time effect: its module would do nothing",
                Span(program.entry.path, 1, 1, 1, 1),
                hint="bind a top-level value (`let y = ..;`), define `fn main()`, or `print` or `save_npy` "
                "something; a file of functions is a module for `mod` or `use`")


def _stage(program, fn, *args, calls: dict | None = None):
    """`fn(*args)`; a CompileError it raises gets the program's sources and, for a stage after
    elaboration, `calls` (ir.Program.call_chains): the calls that led into a function's body."""
    try:
        return fn(*args)
    except CompileError as err:
        if calls:
            note_calls(err, calls)
        if program is not None and err.sources is None:
            err.sources = program.sources
        raise
