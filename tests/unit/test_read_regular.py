"""workspace.read_regular: a regular file's bytes in one read of the size fstat gives, and the
whole file whatever fstat said (a file that grew or shrank, a /proc file of size 0)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from kimi_lsp import workspace
from kimi_lsp.workspace import FileTooLarge, read_regular


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 100_000])
def test_reads_the_whole_file(tmp_path: Path, size: int) -> None:
    p = tmp_path / "f"
    data = os.urandom(size)
    p.write_bytes(data)
    assert read_regular(p, 1 << 20) == data


def test_the_limit_is_inclusive(tmp_path: Path) -> None:
    p = tmp_path / "f"
    p.write_bytes(b"x" * 100)
    assert read_regular(p, 100) == b"x" * 100
    with pytest.raises(FileTooLarge):
        read_regular(p, 99)


@pytest.mark.parametrize("said", [0, 10, 299, 301, 5000])
def test_a_size_fstat_got_wrong_still_reads_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: int) -> None:
    """The file changed between fstat and read (or, like /proc files, reports size 0)."""
    p = tmp_path / "f"
    p.write_bytes(b"y" * 300)
    real = os.fstat

    class Stat:
        def __init__(self, st: os.stat_result) -> None:
            self.st_mode, self.st_size = st.st_mode, said

    monkeypatch.setattr(workspace.os, "fstat", lambda fd: Stat(real(fd)))
    assert read_regular(p, 1 << 20) == b"y" * 300
    if said <= 299:  # fstat let it in: it grew past the limit while being read
        with pytest.raises(FileTooLarge):
            read_regular(p, 299)


def test_a_proc_file_of_size_zero_is_read(tmp_path: Path) -> None:
    proc = Path("/proc/self/status")
    if not proc.is_file() or os.stat(proc).st_size != 0:
        pytest.skip("no /proc file that reports size 0 here")
    assert b"Name:" in read_regular(proc, 1 << 20)
