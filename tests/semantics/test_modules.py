"""Module loading: std paths, project-local `mod`, crate/self/super, and E010/E009 errors."""
import pytest

from einc.diagnostics import CompileError
from einc.semantics.core.modules import load_program, load_source


def write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def std(tmp_path):
    """A tiny fake standard library."""
    root = tmp_path / "fakestd"
    write(root, {
        "math/mod.ein": "pub use basic::*;\npub fn pi() { 3.14 }",
        "math/basic.ein": "pub fn sqrt(x) { __sqrt(x) }\nfn hidden() { 1 }",
        "io.ein": "pub fn load(p) { p }",
    })
    return root


def error_of(fn, *args, **kwargs):
    with pytest.raises(CompileError) as info:
        fn(*args, **kwargs)
    return info.value.diagnostics[0]


def test_std_modules_are_found_as_file_and_folder(std):
    program = load_source("use std::math::sqrt; use std::io::load;", stdlib=std)
    assert set(program.modules) == {(), ("std",), ("std", "math"), ("std", "math", "basic"),
                                    ("std", "io")}
    assert program.modules[("std", "math")].items[1].name == "pi"


def test_paths_in_expressions_load_their_module(std):
    program = load_source("let a = std::io::load(1);", stdlib=std)
    assert ("std", "io") in program.modules


def test_sources_hold_every_file(std):
    program = load_source("use std::math::sqrt;", "main.ein", stdlib=std)
    assert program.sources.line("main.ein", 1) == "use std::math::sqrt;"
    assert program.sources.line(str(std / "math" / "basic.ein"), 2) == "fn hidden() { 1 }"


def test_unknown_std_module_is_e010_at_the_use(std):
    d = error_of(load_source, "let x = 1;\nuse std::nope::f;", stdlib=std)
    assert d.code == "E010" and "std::nope" in d.message
    assert (d.span.line, d.span.col) == (2, 1)


def test_project_local_mod_declarations(tmp_path, std):
    write(tmp_path / "proj", {
        "main.ein": "mod util;\nmod nn;\nuse util::helper;",
        "util.ein": "pub fn helper(x) { x }\nmod inner;",
        "util/inner.ein": "pub fn deep() { 1 }",
        "nn/mod.ein": "mod layers;",
        "nn/layers.ein": "pub fn relu(x) { x }",
    })
    program = load_program(tmp_path / "proj" / "main.ein", stdlib=std)
    assert {("util",), ("util", "inner"), ("nn",), ("nn", "layers")} <= set(program.modules)
    assert program.files[("nn", "layers")].name == "layers.ein"


def test_missing_mod_file_is_e010(tmp_path, std):
    write(tmp_path, {"main.ein": "mod gone;"})
    d = error_of(load_program, tmp_path / "main.ein", stdlib=std)
    assert d.code == "E010" and "gone" in d.message and "gone.ein" in d.hint


def test_crate_self_super_paths(tmp_path, std):
    write(tmp_path, {
        "main.ein": "mod a;\nuse crate::b::f;",
        "b.ein": "pub fn f() { 1 }",
        "a/mod.ein": "mod c;\nuse self::c::g;",
        "a/c.ein": "use super::super::b::f;\npub fn g() { 2 }",
    })
    program = load_program(tmp_path / "main.ein", stdlib=std)
    assert {("a",), ("a", "c"), ("b",)} <= set(program.modules)


def test_inline_modules_are_modules(std):
    program = load_source("mod m { pub fn f() { 1 } }\nuse m::f;", stdlib=std)
    assert program.modules[("m",)].items[0].name == "f"


def test_modules_importing_each_other_are_fine(tmp_path, std):
    write(tmp_path, {
        "main.ein": "mod a;\nmod b;",
        "a.ein": "use crate::b::g;\npub fn f(x) { g(x) }",
        "b.ein": "use crate::a::f;\npub fn g(x) { x }",
    })
    program = load_program(tmp_path / "main.ein", stdlib=std)
    assert {("a",), ("b",)} <= set(program.modules)


def test_each_file_is_parsed_once(std):
    program = load_source("use std::math::sqrt;\nuse std::math::{pi};\nuse std::math::basic::*;",
                          stdlib=std)
    assert len([p for p in program.modules if p[:2] == ("std", "math")]) == 2


def test_stdlib_dir_from_environment(std, monkeypatch):
    monkeypatch.setenv("EINC_STDLIB", str(std))
    assert ("std", "io") in load_source("use std::io::load;").modules


def test_missing_entry_file_is_e009(tmp_path):
    d = error_of(load_program, tmp_path / "nothing.ein")
    assert d.code == "E009"


def test_syntax_error_in_a_module_points_into_that_file(tmp_path, std):
    write(tmp_path, {"main.ein": "mod bad;", "bad.ein": "fn f( {"})
    d = error_of(load_program, tmp_path / "main.ein", stdlib=std)
    assert d.code == "E001" and d.span.file.endswith("bad.ein")


def test_real_stdlib_math_loads():
    program = load_source("use std::math::{sin, sqrt, clip, pi};")
    assert ("std", "math", "trig") in program.modules


def test_a_module_can_re_export_a_builtin(tmp_path):
    from einc.semantics.core.resolve import resolve
    root = tmp_path / "std"
    write(root, {"io.ein": "pub use self::load_npy;"})
    program = load_source("use std::io::load_npy;\nlet w = std::io::load_npy(\"w.npy\");", stdlib=root)
    resolution = resolve(program)
    assert resolution.exports[("std", "io")]["load_npy"].kind == "builtin"


def test_overlapping_globs_keep_the_first_and_an_explicit_import_replaces(tmp_path):
    from einc.semantics.core.resolve import resolve
    root = tmp_path / "std"
    write(root, {"a.ein": "pub fn f() { 1 }\npub fn g() { 2 }", "b.ein": "pub fn f() { 3 }\npub fn g() { 4 }"})
    program = load_source("use std::a::*;\nuse std::b::*;\nuse std::b::g;\nlet x = f() + g();", stdlib=root)
    names = resolve(program).items[()]
    assert names["f"].span.file.endswith("a.ein") and names["g"].span.file.endswith("b.ein")


def test_a_module_file_that_includes_itself_is_reported_at_its_mod_declaration(tmp_path):
    write(tmp_path, {"main.ein": "let a = 1.0;\nmod main;\nlet b = a;\n"})
    diag = error_of(load_program, tmp_path / "main.ein")
    assert diag.code == "E010" and "includes itself" in diag.message
    assert (diag.span.file, diag.span.line, diag.span.col) == (str(tmp_path / "main.ein"), 2, 1)
