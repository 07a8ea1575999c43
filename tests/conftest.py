"""Suite-wide rules. Tests marked `vulkan` need a Vulkan device (Mesa's lavapipe is enough):
without one they are skipped with the reason, except under CI (CI=true), whose .ci/run
installs lavapipe: there a missing device is a failure, so the Vulkan path cannot silently
go untested. Every diagnostic a test's program gets from einc's pipeline has a code and a
location in a file (`_every_diagnostic_is_located`), whatever the test itself checks.
"""
from __future__ import annotations

import functools
import gc
import os

import pytest


@functools.lru_cache(maxsize=None)
def vulkan_unavailable_reason() -> str | None:
    import iree.runtime as rt

    if "vulkan" not in rt.query_available_drivers():
        return "IREE runtime has no vulkan driver"
    try:
        rt.get_device("vulkan", cache=False)     # not kept: programs open a device each
    except (ValueError, RuntimeError) as err:
        return f"no Vulkan device ({err}); install mesa-vulkan-drivers and libvulkan1 for lavapipe"
    return None


@pytest.fixture(autouse=True)
def _programs_closed_after_each_test():
    """Each test's own programs are released when it ends, not whenever the collector gets to them:
    on Vulkan, a device released while another is in use can be lost (einc/runtime/program.py).
    Programs of wider-scoped fixtures stay open, but on the CPU devices only: an open Vulkan
    device keeps two lavapipe threads polling (docs/DECISIONS.md, Running on Vulkan), which
    would slow every later test of the module and the other test process's too. So a Vulkan
    program still open after a test is closed too: a fixture that holds one fails its next user
    ("was closed"), so build in the fixture and load in each test."""
    from einc.runtime.program import open_programs
    before = open_programs()
    yield
    for program in open_programs() - before:
        program.close()
    for program in _vulkan_programs_open():
        program.close()
    _no_cached_vulkan_device()


def _no_cached_vulkan_device() -> None:
    """iree.runtime keeps a device opened by name (`rt.Config("vulkan")`, `get_device(uri)`) until
    the process ends: on lavapipe its two polling threads then slowed every later test of the
    process and the other process's, CI past its time limit. The test that left one fails, and
    the device is dropped so the tests after it do not pay."""
    from iree.runtime import system_setup
    cached = [uri for uri in system_setup._GLOBAL_DEVICES_BY_URI if uri.startswith("vulkan")]
    for uri in cached:
        del system_setup._GLOBAL_DEVICES_BY_URI[uri]
    if cached:
        pytest.fail(f"the test left IREE's cached {', '.join(cached)} device open; "
                    "open it with get_device(uri, cache=False) and release it", pytrace=False)


def _vulkan_programs_open() -> list:
    from einc.runtime.program import open_programs
    if not any(p.device == "vulkan" for p in open_programs()):
        return []
    gc.collect()                      # one that only a reference cycle keeps is not open for long
    return [p for p in open_programs() if p.device == "vulkan"]


def pytest_report_header(config):
    from tests.tiers import FULL
    return "einc test tier: " + ("full (EINC_TESTS=full)" if FULL else "fast (`make test-full` runs every test)")


def pytest_collection_modifyitems(config, items):
    """The fast tier leaves out the tests marked `full` and, of a test function marked
    `sampled(every=k)`, all but every k-th of its cases (tests/tiers.py)."""
    from tests.tiers import FULL, left_out_of_the_fast_tier
    if FULL:
        return
    left_out = left_out_of_the_fast_tier(items)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item not in left_out]


def pytest_runtest_setup(item):
    reason = vulkan_unavailable_reason() if item.get_closest_marker("vulkan") else None
    if reason and os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the Vulkan tests: {reason}")
    if reason:
        pytest.skip(reason)


@pytest.fixture
def diagnose(tmp_path):
    """diagnose(source) -> (the first diagnostic of compiling `source`, the rendered report).
    `source` is text, or bytes exactly as a file would hold them."""
    from einc.diagnostics import CompileError
    from einc.driver import front_end

    def first(source):
        path = tmp_path / "prog.ein"
        path.write_bytes(source if isinstance(source, bytes) else source.encode())
        with pytest.raises(CompileError) as info:
            front_end(str(path))
        return info.value.diagnostics[0], info.value.render(info.value.sources)
    return first


@pytest.fixture
def analyze(tmp_path):
    """analyze(source) -> the analyzed program of `source` (front_end's second result); a
    diagnostic fails the test."""
    from einc.driver import front_end

    def analyzed(source):
        path = tmp_path / "prog.ein"
        path.write_text(source)
        return front_end(str(path))[1]
    return analyzed


@pytest.fixture(autouse=True)
def _every_diagnostic_is_located(monkeypatch):
    """Each CompileError leaving a pipeline stage (einc.driver._stage, through which every
    entry point runs: einc.compile, einc check/build/run, the fuzzers in process) is checked
    after the test as the mutant fuzzer checks its own (fuzz.mutants.check.diagnostic_problem):
    a code E001..E011, a span, a rendered `-->`. One without fails the test that caused it.
    The one exception: a program file that cannot be read has no text to point into."""
    from einc import driver
    from einc.diagnostics import CompileError
    from fuzz.mutants.check import diagnostic_problem

    escaped = []
    stage = driver._stage

    def recording(program, fn, *args, **options):
        try:
            return stage(program, fn, *args, **options)
        except CompileError as err:
            if not (fn.__name__ == "load_program" and not os.access(args[0], os.R_OK)):
                escaped.append(err)
            raise
    monkeypatch.setattr(driver, "_stage", recording)
    yield
    problems = {p for p in (diagnostic_problem(err, "", b"") for err in escaped) if p}
    if problems:
        pytest.fail("diagnostics without a location: " + "; ".join(sorted(problems)), pytrace=False)
