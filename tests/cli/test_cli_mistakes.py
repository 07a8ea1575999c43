"""Programs with the mistakes a user makes, each through `einc check`, `einc build` and `einc run`:
every one is a diagnostic with its code, its place and the source line, never a traceback or an
internal error. (FILE: the program; other files beside it are the modules it uses.)"""
import re

import pytest

# name -> (files, code, line of the primary span, a piece of the message)
MISTAKES = {
    "misspelt name": ({"main.ein": "let x: [f32; N];\nlet y[i] = x[i] * 2.0;\nlet z = sum[i](yy[i]);\n"},
                      "E003", 3, "cannot find name `yy`"),
    "extent mismatch": ({"main.ein": "let a: [f32; 3];\nlet b: [f32; 4];\nlet c[i] = a[i] + b[i];\n"},
                        "E004", 3, "index `i` gets extent 3"),
    "matmul of wrong shapes": ({"main.ein": "let A: [f32; 3, 4];\nlet B: [f32; 3, 4];\n"
                                            "let C[i, j] = sum[k](A[i, k] * B[k, j]);\n"}, "E004", 3, "index `k`"),
    "too few arguments": ({"main.ein": "fn f(a: f32, b: f32) -> f32 { a + b }\nlet x = f(1.0);\n"},
                          "E002", 2, "`f` takes 2 arguments but 1 was given"),
    "std function, wrong arity": ({"main.ein": "use std::ml::linalg_ops::solve;\nlet A: [f64; 3, 3];\n"
                                               "let x = solve(A);\n"}, "E002", 3, "`solve` takes 2 arguments"),
    "missing let": ({"main.ein": "let x: [f32; N];\ny[i] = x[i] * 2.0;\n"}, "E001", 2, "found '='"),
    "missing semicolon": ({"main.ein": "let x: f32\nlet y = x * 2.0;\n"}, "E001", 1, "found 'let'"),
    "dangling operator": ({"main.ein": "let x: [f32; N];\nlet y[i] = x[i] * ;\n"}, "E001", 2, "found ';'"),
    "unclosed parenthesis": ({"main.ein": "let x: [f32; N];\nlet y[i] = (x[i] * 2.0;\n"}, "E001", 2, "expected ')'"),
    "stray character": ({"main.ein": "let x: f32;\nlet y = x $ 2.0;\n"}, "E001", 2, "unexpected character '$'"),
    "recurrence without a base case": ({"main.ein": "let u: [f32; T];\nlet s[t in 1..T] = 0.5 * s[t - 1] + u[t];\n"},
                                       "E005", 2, "no clause of `s` defines that point"),
    "read before the window": ({"main.ein": "let u: [f32; T];\nlet s[0] = u[0];\nlet s[t in 1..T] = s[t - 2] + u[t];\n"},
                               "E005", 3, "before the start"),
    "read ahead of the step": ({"main.ein": "let u: [f32; T];\nlet s[0] = u[0];\nlet s[t in 1..T] = s[t + 1] + u[t];\n"},
                               "E007", 3, "ahead of the step"),
    "derivative of an integer": ({"main.ein": "let n: i32;\nlet y = n * n;\nlet g = @y / @n;\n"},
                                 "E002", 3, "derivatives need float values"),
    "derivative of a bool": ({"main.ein": "let x: f32;\nlet b = x > 1.0;\nlet g = @b / @x;\n"},
                             "E002", 3, "derivatives need float values"),
    "derivative by an unknown name": ({"main.ein": "let x: f32;\nlet y = x * x;\nlet g = @y / @z;\n"},
                                      "E003", 3, "`z`"),
    "derivative by a number": ({"main.ein": "let x: f32;\nlet y = x * x;\nlet g = @y / @3.0;\n"},
                               "E004", 3, "needs the expression to read one binding"),
    "unknown std function": ({"main.ein": "use std::math::frobnicate;\nlet x: f32;\nlet y = frobnicate(x);\n"},
                             "E010", 1, "has no item `frobnicate`"),
    "unknown std function by path": ({"main.ein": "let x: [f32; 3];\nlet y = std::math::nothing(x);\n"},
                                     "E010", 2, "has no item `nothing`"),
    "misspelt std module": ({"main.ein": "use std::ml::activaions::relu;\nlet x: [f32; 3];\nlet y = relu(x);\n"},
                            "E010", 1, "unresolved module `std::ml::activaions`"),
    "missing project module": ({"main.ein": "use helpers::twice;\nlet y = twice(2.0);\n"},
                               "E010", 1, "unresolved module `helpers`"),
    "syntax error in a module file": ({"main.ein": "use helper::twice;\nlet x: f32;\nlet y = twice(x);\n",
                                       "helper.ein": "pub fn twice(a: f32) -> f32 { a * 2.0 +  }\n"},
                                      "E001", 1, "found '}'"),
    "mixed types": ({"main.ein": "let x: f32;\nlet n: i32;\nlet y = x + n;\n"}, "E002", 3, "mismatched types f32 and i32"),
    "number plus string": ({"main.ein": "let x: f32;\nlet y = x + \"one\";\n"}, "E002", 2, "cannot join f32 and str"),
    "unknown function": ({"main.ein": "let x: f32;\nlet y = sqrtt(x);\n"}, "E003", 2, "`sqrtt`"),
    "std function not imported": ({"main.ein": "let x: [f32; 6];\nlet y = reshape(x, [3, 2]);\n"},
                                  "E003", 2, "`reshape`"),
    "constant index out of bounds": ({"main.ein": "let x: [f32; 4];\nlet y = x[4];\n"}, "E005", 2, "out of bounds"),
    "shifted index out of bounds": ({"main.ein": "let x: [f32; N];\nlet y[i in 0..N] = x[i + 1];\n"},
                                    "E005", 2, "out of bounds"),
    "too many subscripts": ({"main.ein": "let x: [f32; 4];\nlet y = x[0, 1];\n"}, "E004", 2, "2 subscripts"),
    "index not in scope": ({"main.ein": "let x: [f32; N];\nlet y = x[i] * 2.0;\n"}, "E003", 2, "`i`"),
    "unknown element type": ({"main.ein": "let x: [float; N];\nlet y[i] = x[i];\n"}, "E002", 1,
                             "input `x` has the element type `float`, which is not a number type"),
    "unknown scalar type": ({"main.ein": "let x: double;\nlet y = x * 2.0;\n"}, "E002", 1,
                            "input `x` has the type `double`, which is not a number type"),
    "wrong return type": ({"main.ein": "fn f(a: f32) -> i32 { a * 2.0 }\nlet x: f32;\nlet y = f(x);\n"},
                          "E002", 1, "expected i32, found f32"),
    "non-bool condition": ({"main.ein": "let x: f32;\nlet y = if x { 1.0 } else { 2.0 };\n"},
                           "E002", 2, "expected bool, found f32"),
    "non-bool where": ({"main.ein": "let x: [f32; N];\nlet y = sum[i](x[i] where x[i]);\n"},
                       "E002", 2, "expected bool"),
    "destructuring too many": ({"main.ein": "fn f(a: f32) -> (f32, f32) { (a, a * 2.0) }\nlet x: f32;\n"
                                            "let (p, q, r) = f(x);\n"}, "E002", 3, "into 3 parts"),
    "reads itself": ({"main.ein": "let x: f32;\nlet y = y + x;\n"}, "E003", 2, "read before it is defined"),
    "recurrence of the wrong rank": ({"main.ein": "let x0: [f32; 3];\nlet x[0] = x0;\n"
                                                  "let x[k in 1..5] = x[k - 1][0] * 2.0;\n"}, "E004", 3, "axes"),
    "solve of mismatched sizes": ({"main.ein": "use std::ml::linalg_ops::solve;\nlet A: [f64; 3, 3];\n"
                                               "let b: [f64; 4];\nlet x = solve(A, b);\n"}, "E006", None, "solve: A"),
    "load_npy of a missing file": ({"main.ein": "let w = load_npy(\"absent.npy\");\nlet v = w[0];\n"},
                                   "E009", 1, "cannot load `absent.npy`: no such file"),
}


def _write(folder, files):
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder / "main.ein"


@pytest.mark.parametrize("command", ["check", "build", "run"])
@pytest.mark.parametrize("name", list(MISTAKES))
def test_a_mistake_is_a_located_diagnostic(einc_cli, tmp_path, monkeypatch, name, command):
    files, code, line, message = MISTAKES[name]
    main = _write(tmp_path, files)
    monkeypatch.setenv("EINC_CACHE", str(tmp_path / "cache"))
    argv = {"check": ["check", main], "build": ["build", main, "-o", tmp_path / "m.vmfb"], "run": ["run", main]}
    status, out, err = einc_cli(*argv[command])
    assert status == 1 and out == ""
    assert err.startswith(f"error[{code}]: ") and message in err.splitlines()[0]
    assert "Traceback" not in err and "internal error" not in err
    located = re.search(r"^ *--> (\S+):(\d+):(\d+)\n *\|\n *(\d+) \| (.*)$", err, re.MULTILINE)
    assert located is not None
    where, number, _col, shown, text = located.groups()
    source = {tmp_path / n: t for n, t in files.items()}.get(type(main)(where))
    if line is not None:    # the primary span is in the program (a std assert's is in std, with a call note)
        assert int(number) == int(shown) == line
    lines = (source if source is not None else type(main)(where).read_text()).splitlines()
    assert text == lines[int(shown) - 1]
