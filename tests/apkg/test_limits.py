"""The build warns when a package gets close to what AnkiWeb accepts."""

from __future__ import annotations

import random
import shutil
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

import ankigen.apkg.limits
from tests.helpers import invoke, item, write_bank


def test_no_warning_far_below_the_limits(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    result = invoke(runner, "build")
    assert result.exit_code == 0 and "AnkiWeb" not in result.stderr


def test_warnings_near_each_limit(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "media").mkdir()
    noise = random.Random(4).randbytes(300 * 300 * 3)
    Image.frombytes("RGB", (300, 300), noise).save(project / "media" / "noise.png")
    write_bank(project / "banks", items=[item("a", image="noise.png", image_alt="noise")])
    assert invoke(runner, "build").exit_code == 0
    package = project / "out" / "demo.en.apkg"
    with zipfile.ZipFile(package) as archive:
        sizes = {info.filename: info.file_size for info in archive.infolist()}
    sizes["package"] = package.stat().st_size

    def build_with_limits(share: float) -> list[str]:
        # each limit scaled down so the deck uses `share` of it
        monkeypatch.setattr(ankigen.apkg.limits, "MAX_COMPRESSED", int(sizes["package"] / share))
        monkeypatch.setattr(
            ankigen.apkg.limits, "MAX_COLLECTION", int(sizes["collection.anki2"] / share)
        )
        monkeypatch.setattr(ankigen.apkg.limits, "MAX_MEDIA_FILE", int(sizes["0"] / share))
        shutil.rmtree(project / "out")
        result = invoke(runner, "build")
        assert result.exit_code == 0
        return [line for line in result.stderr.splitlines() if "AnkiWeb" in line]

    assert build_with_limits(0.7) == []
    warnings = build_with_limits(0.9)
    assert len(warnings) == 3
    assert all(w.startswith("banks/demo/en.yaml:4: warning: demo.en.apkg") for w in warnings)
    assert all(w.endswith("split the bank, or use fewer or smaller images") for w in warnings)
    text = "\n".join(warnings)
    assert f"demo.en.apkg is {sizes['package'] / 2**20:.1f} MiB; AnkiWeb syncs at most" in text
    assert "its collection is" in text and "AnkiWeb accepts collections up to" in text
    assert "a media file is" in text and "does not sync media files over" in text
