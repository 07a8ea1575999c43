"""The integrity seal of einc modules: damage is a one-line RunError before IREE reads a byte,
and IREE's own tools still load sealed modules."""
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import einc.runtime as runtime
from einc.runtime import RunError
from einc.module_file import seal, unseal
from mlir_samples import compiled

IREE_TOOLS = Path(sys.executable).parent


@pytest.fixture(scope="module")
def sealed() -> bytes:
    return compiled("matmul", "llvm-cpu")


def test_the_seal_is_the_zip_comment_over_the_bytes_iree_wrote(sealed, tmp_path):
    original = unseal(sealed, "m.vmfb")
    assert original[-2:] == b"\0\0" and seal(original) == sealed
    path = tmp_path / "m.vmfb"
    path.write_bytes(sealed)
    with zipfile.ZipFile(path) as archive:
        assert archive.comment == b"einc-sha256:" + hashlib.sha256(original).hexdigest().encode()
        assert "module.fb" in archive.namelist()


def test_iree_tools_load_a_sealed_module(sealed, tmp_path):
    path = tmp_path / "m.vmfb"
    path.write_bytes(sealed)
    np.save(tmp_path / "A.npy", np.ones((3, 2), np.float32))
    np.save(tmp_path / "B.npy", np.ones((2, 2), np.float32))
    dump = subprocess.run([IREE_TOOLS / "iree-dump-module", path], capture_output=True, text=True)
    assert dump.returncode == 0 and "@main" in dump.stdout
    run = subprocess.run([IREE_TOOLS / "iree-run-module", f"--module={path}", "--device=local-task",
                          "--function=main", f"--input=@{tmp_path / 'A.npy'}", f"--input=@{tmp_path / 'B.npy'}",
                          "--input=3"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "3x2xf32=[6 6][6 6][6 6]" in run.stdout


@pytest.mark.parametrize("damage", ["flip", "cut", "insert", "append", "comment"])
def test_damage_anywhere_is_refused_before_iree(sealed, tmp_path, damage):
    data = bytearray(sealed)
    for position in range(0, len(data), len(data) // 7):     # the flatbuffer, the ELF, the directory
        damaged = bytearray(data)
        if damage == "flip":
            damaged[position] ^= 0x10
        elif damage == "cut":
            del damaged[position:]
        elif damage == "insert":
            damaged[position:position] = b"\x00"
        elif damage == "append":
            damaged += b"\n"
        else:
            damaged[-1 - position % 64] ^= 0x01                 # inside the seal itself
        path = tmp_path / "damaged.vmfb"
        path.write_bytes(bytes(damaged))
        with pytest.raises(RunError, match=rf"^{path} (is damaged: its contents do not match its integrity "
                                           rf"digest|has no einc integrity seal)"):
            runtime.load(path)


def test_unsealed_modules_are_refused(sealed):
    with pytest.raises(RunError, match=r"^<module bytes> has no einc integrity seal: it is damaged, or was "
                                       r"not built by this einc \(rebuild it with `einc build`\)$"):
        runtime.load(unseal(sealed, "m"))


def test_iree_errors_on_a_sealed_file_are_one_line():
    not_a_module = b"PK\x03\x04 not really an archive " + b"PK\x05\x06" + bytes(18)
    with pytest.raises(RunError, match=r"^<module bytes> is not a valid IREE module \([^\n]*\)$"):
        runtime.load(seal(not_a_module))


def test_sealing_needs_the_archive_end_iree_writes():
    with pytest.raises(ValueError, match="does not end in an empty ZIP archive comment"):
        seal(b"\x00" * 64)


def test_damaged_module_in_a_subprocess_exits_1_without_a_signal(sealed, tmp_path):
    # without the seal, this damage killed the process with SIGSEGV (on the machine this test was
    # written on; other starts gave IndexError and ValueError from IREE's loader)
    damaged = bytearray(sealed)
    for offset in range(2338, len(damaged) - 200, 997):
        damaged[offset] ^= 0xFF
    path = tmp_path / "damaged.vmfb"
    path.write_bytes(bytes(damaged))
    done = subprocess.run([sys.executable, "-m", "einc", "run", path], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: {path} is damaged: its contents do not match its integrity digest " \
                          "(rebuild it with `einc build`)\n"
