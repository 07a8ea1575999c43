"""einc.runtime.sizes: the signature's size checks, evaluated on the inputs' shapes."""
import pytest

from einc.runtime import RunError
from einc.runtime.signature import InputSpec, Signature
from einc.runtime.sizes import check_sizes


def form(text, const, *terms):
    return {"text": text, "const": const, "terms": [list(t) for t in terms]}


H_MINUS_KH = form("H - KH + 1", 1, (1, "H"), (-1, "KH"))
HALF = form("(H - KH + 1) / 2", 0, (1, {"floor": H_MINUS_KH, "by": 2}))
EXTENT = {"kind": "extent", "var": "ph", "extent": HALF, "at": "p.ein:3:9"}
LAST_ROW = {"kind": "index", "access": "read", "array": "X", "axis": 0, "size": form("H", 0, (1, "H")),
            "first": form("KH", 0, (1, "KH")), "last": form("KH", 0, (1, "KH")),
            "when": [form("N", 0, (1, "N"))], "at": None}


def signature(*checks) -> Signature:
    return Signature(inputs=[InputSpec("X", "float32", ["N", "H"]), InputSpec("K", "float32", ["KH"])],
                     outputs=[], prints={}, source="p.ein", target="llvm-cpu",
                     sizes={"N": ("X", 0), "H": ("X", 1), "KH": ("K", 0)}, size_checks=list(checks))


def test_floor_of_a_negative_extent_is_negative():
    check_sizes(signature(EXTENT), {"X": (1, 4), "K": (3,)})          # (4 - 3 + 1) // 2 = 1
    check_sizes(signature(EXTENT), {"X": (1, 2), "K": (3,)})          # 0 // 2 = 0
    with pytest.raises(RunError) as failure:
        check_sizes(signature(EXTENT), {"X": (1, 1), "K": (3,)})      # -1 // 2 = -1
    assert str(failure.value) == ("input sizes H = 1 (X axis 1), KH = 3 (K axis 0) do not fit the program: "
                                  "the range of `ph` at p.ein:3:9 would have extent (H - KH + 1) / 2 = -1")


def test_an_access_counts_only_when_it_runs():
    check_sizes(signature(LAST_ROW), {"X": (0, 2), "K": (5,)})        # N = 0: the read never runs
    check_sizes(signature(LAST_ROW), {"X": (1, 6), "K": (5,)})
    with pytest.raises(RunError, match=r"^input sizes N = 1 \(X axis 0\), H = 5 \(X axis 1\), KH = 5 \(K axis 0\) "
                                       r"do not fit the program: the read of X needs index KH = 5 of its axis 0, "
                                       r"which has size H = 5$"):
        check_sizes(signature(LAST_ROW), {"X": (1, 5), "K": (5,)})


def test_malformed_checks_are_a_run_error():
    with pytest.raises(RunError, match="^p.ein has malformed size checks"):
        check_sizes(signature({"kind": "extent", "extent": {"const": 1}}), {"X": (1, 1), "K": (1,)})
