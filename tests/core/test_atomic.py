"""Several files replaced as one step, when one of the renames fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from ankigen.core.atomic import TEMP_PREFIX, replace_files
from ankigen.core.reading import read_regular


def test_a_failed_rename_puts_back_the_files_already_replaced(tmp_path: Path) -> None:
    """A pull into two banks, the second now a folder: the first was left new while the
    command said it failed. Each replaced file's old one is kept as a hard link until all
    are in, and put back when one fails; a file that was not there is removed again."""
    first, new, blocked = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.yaml"
    first.write_bytes(b"old a")
    blocked.mkdir()
    with pytest.raises(OSError) as raised:
        replace_files(
            [
                (first, b"new a", 0o644, None),
                (new, b"new b", 0o644, None),
                (blocked, b"c", 0o644, None),
            ]
        )
    assert raised.value.filename == str(blocked)
    assert "could not be put back" not in str(raised.value)
    assert first.read_bytes() == b"old a" and not new.exists() and blocked.is_dir()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(TEMP_PREFIX)] == []


def test_own_files_are_read_whole_up_to_their_limit(tmp_path: Path) -> None:
    """`read_regular`: a file of exactly the limit is read; one byte more is refused
    before it is read, saying its size."""
    path = tmp_path / "f"
    path.write_bytes(b"x" * 300)
    assert read_regular(path, limit=300) == b"x" * 300
    with pytest.raises(OSError, match="300 bytes, over the 299 it may be"):
        read_regular(path, limit=299)
