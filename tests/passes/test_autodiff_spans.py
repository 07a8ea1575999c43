"""The code autodiff generates is located at the `@y / @x` that asked for it, so a diagnostic a
later pass raises about it (a read past an array's end, a size check) points at that line."""
from einc.driver import front_end
from einc.ir.nodes import Read, walk
from tests.programs import source

KALMAN = source("kalman_local_level") + "let J = @v / @y;\nlet column = (@v / @y)[:, 2];\n"


def test_every_read_and_index_range_of_a_derivative_has_a_place(tmp_path):
    path = tmp_path / "kalman.ein"
    path.write_text(KALMAN)
    program = front_end(str(path))[1]
    for name in ("d", "J", "column"):
        value = dict(program.outputs)[name]
        reads = [v for v in walk([value]) if isinstance(v, Read)]
        assert reads and all(r.span is not None for r in reads), name
        lines = {r.span.line for r in reads}
        assert lines <= {4, 5, 6, 7, 8, 9}, (name, lines)       # the program's own statements
        assert all(var.span is not None for v in walk([value]) for var in getattr(v, "vars", ()))
    generated = [r for r in walk([dict(program.outputs)["d"]]) if isinstance(r, Read) and r.span.line == 7]
    assert generated          # the adjoint loop's own reads point at `@L / @s`
