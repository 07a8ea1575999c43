"""The target records: a name turns into its record or a clear error, and every defect id a
record lists is an entry of docs/IREE_DEFECTS.md that a workaround in einc asks about."""
import re
from pathlib import Path

import pytest

import einc
from einc.target import DEFAULT, TARGETS, get

ROOT = Path(einc.__file__).parent


def test_a_name_turns_into_its_record_and_a_record_stays_itself():
    for name, target in TARGETS.items():
        assert get(name) is target and get(target) is target and target.name == name
    assert DEFAULT.name == "llvm-cpu"


def test_an_unknown_name_is_a_one_line_error():
    with pytest.raises(ValueError, match=r"^unknown target 'cuda'; expected one of llvm-cpu, llvm-cpu-generic, "
                                         r"vulkan-spirv$"):
        get("cuda")


def test_every_listed_defect_is_registered_and_asked_about():
    registry = set(re.findall(r"^\| (IREE-\d+) \|", (ROOT.parent / "docs" / "IREE_DEFECTS.md").read_text(), re.M))
    code = "\n".join(path.read_text() for path in ROOT.rglob("*.py") if path.name != "target.py")
    for target in TARGETS.values():
        for defect in target.defects:
            assert defect in registry, f"{target.name}: {defect} is not in docs/IREE_DEFECTS.md"
            assert f'"{defect}"' in code, f"{target.name}: no workaround asks about {defect}"


def test_the_vulkan_record_refuses_64_bit_and_16_bit_types():
    vulkan = get("vulkan-spirv")
    assert [vulkan.replacement_for(t) for t in ("f64", "i64", "u64", "i16", "u16", "f32", "i8", "bool")] == \
        ["f32", "i32", "u32", "i32", "i32", None, None, None]
    assert get("llvm-cpu").replacement_for("f64") is None
