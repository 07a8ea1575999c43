"""Reading .npy inputs: clean one-line errors for anything unreadable."""
import numpy as np
import pytest

from einc.runtime import RunError, read_npy


def test_reads_an_array(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(3, dtype=np.int64))
    np.testing.assert_array_equal(read_npy(str(tmp_path / "a.npy")), np.arange(3))


@pytest.mark.parametrize("content, message", [
    (b"not numpy at all", "not a valid .npy file"),
    (b"", "not a valid .npy file"),
])
def test_corrupt_files(tmp_path, content, message):
    (tmp_path / "bad.npy").write_bytes(content)
    with pytest.raises(RunError, match=message):
        read_npy(str(tmp_path / "bad.npy"))


def test_truncated_and_object_arrays(tmp_path):
    np.save(tmp_path / "full.npy", np.ones(100))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "full.npy").read_bytes()[:200])
    np.save(tmp_path / "objects.npy", np.array([{}, []], dtype=object), allow_pickle=True)
    for name in ("cut.npy", "objects.npy"):
        with pytest.raises(RunError, match=f"cannot read .*{name}: not a valid .npy file"):
            read_npy(str(tmp_path / name))


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(RunError, match="no such file"):
        read_npy(str(tmp_path / "nope.npy"))
    with pytest.raises(RunError, match="is a directory"):
        read_npy(str(tmp_path))


def test_a_file_it_may_not_read_says_so(tmp_path, monkeypatch):
    """Not "not a valid .npy file (Permission denied)": the file may be fine (root ignores
    modes, so the refusal is made by `open`)."""
    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", path)
    np.save(tmp_path / "a.npy", np.ones(2))
    monkeypatch.setattr("einc.runtime.npy.open", refuse, raising=False)
    with pytest.raises(RunError, match=r"^cannot read .*a.npy: permission denied$"):
        read_npy(str(tmp_path / "a.npy"))


def test_a_header_cut_inside_its_dictionary_is_one_line(tmp_path):
    # found by tools/fuzz_runner.py: numpy tokenizes the header and raised tokenize.TokenError
    np.save(tmp_path / "a.npy", np.ones((3, 2), np.float32))
    data = bytearray((tmp_path / "a.npy").read_bytes())
    data[data.index(b"}")] = ord(" ")
    (tmp_path / "a.npy").write_bytes(bytes(data))
    with pytest.raises(RunError, match=r"^cannot read .*a.npy: not a valid .npy file \(EOF in multi-line statement\)$"):
        read_npy(str(tmp_path / "a.npy"))


def test_an_npz_given_as_one_array_says_to_give_it_alone(tmp_path):
    # it said "the magic string is not correct; expected b'\x93NUMPY', got b'PK\x03\x04-\x00'"
    np.savez(tmp_path / "z.npz", A=np.ones(3, np.float32))
    with pytest.raises(RunError, match=r"z.npz: it is an .npz archive, not one array; give it alone"):
        read_npy(str(tmp_path / "z.npz"))
