"""Images: verified, cleaned of metadata, downscaled, content-named, cached, and in Anki."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from tests.helpers import (
    AnkiCollection,
    invoke,
    item,
    read_build_cache,
    without_versions,
    write_bank,
)
from tests.support.images import line_art

NAME = re.compile(r"^[0-9a-f]{20}\.(png|jpg|webp)$")


def photo(path: Path, size: tuple[int, int] = (3000, 2000), orientation: int | None = None) -> Path:
    """A noisy photo with camera and GPS metadata."""
    import random

    rng = random.Random(7)
    image = Image.frombytes("RGB", size, rng.randbytes(size[0] * size[1] * 3))
    exif = Image.Exif()
    exif[0x010F] = "CameraMaker"  # Make
    exif[0x0110] = "Model X"  # Model
    if orientation:
        exif[0x0112] = orientation
    exif.get_ifd(0x8825).update({1: "N", 2: (52.0, 31.0, 12.0), 3: "E", 4: (13.0, 24.0, 1.0)})
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, "JPEG", exif=exif, quality=95, comment=b"secret comment")
    return path


def packaged_media(package: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(package) as archive:
        index = json.loads(archive.read("media"))
        return {name: archive.read(number) for number, name in index.items()}


@pytest.fixture
def media(project: Path) -> Path:
    folder = project / "media"
    folder.mkdir()
    return folder


def test_images_land_in_ankis_media_folder_and_notes_reference_them(
    project: Path, media: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    photo(media / "diagrams" / "ring.jpg")
    line_art(media / "other" / "ring.jpg.png")
    write_bank(
        project / "banks",
        items=[
            item(
                "a",
                image="diagrams/ring.jpg",
                image_alt='A ring of "GPUs"',
                explanation_image="other/ring.jpg.png",
                explanation_image_alt="A line",
            ),
            item("b", image="diagrams/ring.jpg", image_alt="Same picture again"),
        ],
    )
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    files = packaged_media(project / "out" / "demo.en.apkg")
    assert len(files) == 2  # the photo used twice is stored once
    assert all(NAME.match(name) and len(name.encode()) <= 120 for name in files)

    collection.import_package(project / "out" / "demo.en.apkg")
    a, b = collection.note_by_item("a"), collection.note_by_item("b")
    match = re.fullmatch(
        r'<img src="([0-9a-f]{20}\.(?:jpg|webp))" alt="A ring of &quot;GPUs&quot;">', a["Image"]
    )
    assert match, a["Image"]
    assert b["Image"] == f'<img src="{match[1]}" alt="Same picture again">'
    assert re.fullmatch(r'<img src="[0-9a-f]{20}\.png" alt="A line">', a["ExplanationImage"])
    folder = Path(collection.col.media.dir())
    for name, data in files.items():
        assert (folder / name).read_bytes() == data
    card = collection.col.get_card(collection.col.find_cards("ItemId:a")[0])
    assert match[1] in card.question() and "A line" in card.answer()


def test_photos_are_downscaled_and_stripped_of_metadata(
    project: Path, media: Path, runner: CliRunner
) -> None:
    photo(media / "big.jpg")
    write_bank(project / "banks", items=[item("a", image="big.jpg", image_alt="x")])
    assert invoke(runner, "build").exit_code == 0
    [(_name, data)] = packaged_media(project / "out" / "demo.en.apkg").items()
    with Image.open(io.BytesIO(data)) as image:
        assert image.size == (1600, 1067)
        assert not image.getexif()
        assert "exif" not in image.info and "xmp" not in image.info and "comment" not in image.info
        assert image.format in ("JPEG", "WEBP")
    assert b"CameraMaker" not in data and b"secret comment" not in data


def test_max_image_size_option(project: Path, media: Path, runner: CliRunner) -> None:
    photo(media / "big.jpg", size=(900, 600))
    write_bank(project / "banks", items=[item("a", image="big.jpg", image_alt="x")])
    assert invoke(runner, "build", "--max-image-size", "300").exit_code == 0
    [(_, data)] = packaged_media(project / "out" / "demo.en.apkg").items()
    with Image.open(io.BytesIO(data)) as image:
        assert image.size == (300, 200)


def test_exif_orientation_is_applied(project: Path, media: Path, runner: CliRunner) -> None:
    photo(media / "turned.jpg", size=(300, 200), orientation=6)  # rotate 90° to display
    write_bank(project / "banks", items=[item("a", image="turned.jpg", image_alt="x")])
    assert invoke(runner, "build").exit_code == 0
    [(_, data)] = packaged_media(project / "out" / "demo.en.apkg").items()
    with Image.open(io.BytesIO(data)) as image:
        assert image.size == (200, 300)


def test_line_art_and_transparency_stay_png(project: Path, media: Path, runner: CliRunner) -> None:
    line_art(media / "flat.png")
    line_art(media / "clear.png", transparent=True)
    write_bank(
        project / "banks",
        items=[
            item("a", image="flat.png", image_alt="x"),
            item("b", image="clear.png", image_alt="y"),
        ],
    )
    assert invoke(runner, "build").exit_code == 0
    files = packaged_media(project / "out" / "demo.en.apkg")
    assert sorted(name.rsplit(".", 1)[1] for name in files) == ["png", "png"]
    modes = sorted(Image.open(io.BytesIO(data)).mode for data in files.values())
    assert "RGBA" in modes


def test_builds_with_images_are_reproducible_and_cached(
    project: Path, media: Path, runner: CliRunner
) -> None:
    photo(media / "p.jpg", size=(800, 600))
    write_bank(project / "banks", items=[item("a", image="p.jpg", image_alt="x")])
    assert invoke(runner, "build").exit_code == 0
    first = (project / "out" / "demo.en.apkg").read_bytes()
    cached = list((project / "out" / ".ankigen-images").iterdir())
    assert len(cached) == 1
    (project / "out" / "demo.en.apkg").unlink()
    assert invoke(runner, "build").exit_code == 0
    assert (project / "out" / "demo.en.apkg").read_bytes() == first
    # without the cache the image is processed again, to the same bytes
    (project / "out").rename(project / "old-out")
    assert invoke(runner, "build").exit_code == 0
    assert (project / "out" / "demo.en.apkg").read_bytes() == first


@pytest.mark.parametrize(
    ("path", "setup", "message"),
    [
        ("missing.png", None, "image 'missing.png' not found in the media folder"),
        ("../secret.png", "outside", "points outside the media folder"),
        ("/etc/passwd", None, "must be relative to the media folder"),
        ("fake.png", "fake", "'fake.png' is not an image Pillow can read"),
        ("bomb.png", "bomb", "more than the 40 megapixels allowed (a decompression bomb?)"),
    ],
)
def test_bad_images_are_errors_at_their_line(
    project: Path, media: Path, runner: CliRunner, path: str, setup: str | None, message: str
) -> None:
    if setup == "outside":
        line_art(project / "secret.png")
    elif setup == "fake":
        (media / "fake.png").write_text("<?php echo 'not an image'; ?>")
    elif setup == "bomb":
        Image.new("1", (8000, 8000)).save(media / "bomb.png")
    write_bank(project / "banks", items=[item("good"), item("a", image=path, image_alt="x")])
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert result.output.startswith("banks/demo/en.yaml:23: error: item 'a': ")
    assert message in result.output
    assert not (project / "out" / "demo.en.apkg").exists()
    lint = invoke(runner, "lint")
    assert lint.exit_code == 1 and message in lint.output


def test_missing_alt_text_is_a_warning(project: Path, media: Path, runner: CliRunner) -> None:
    line_art(media / "flat.png")
    write_bank(project / "banks", items=[item("a", image="flat.png")])
    result = invoke(runner, "lint")
    assert result.output == (
        "banks/demo/en.yaml:14: warning: item 'a': image has no image_alt: describe it for screen readers\n"
        "0 errors, 1 warning in 1 bank\n"
    )


def test_media_option_and_preview_copies_images(project: Path, runner: CliRunner) -> None:
    line_art(project / "pictures" / "flat.png")
    write_bank(project / "banks", items=[item("a", image="flat.png", image_alt="x")])
    assert invoke(runner, "build").exit_code == 1  # not in the default media/ folder
    assert invoke(runner, "build", "--media", "pictures").exit_code == 0
    result = invoke(runner, "preview", "--media", "pictures")
    assert result.exit_code == 0
    images = list((project / "out" / "preview").glob("*.png"))
    assert len(images) == 1
    assert images[0].name in (project / "out" / "preview" / "demo.en.html").read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize("settled", [False, True])
def test_an_image_written_seconds_ago_is_hashed_by_the_next_build(
    project: Path, media: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch, settled: bool
) -> None:
    """As for banks: an image's status vouches for its content only if both its times were
    more than a few seconds old when taken; else the next build hashes it again."""
    import ankigen.bank.folder

    if settled:
        monkeypatch.setattr(ankigen.bank.folder, "SETTLE_NS", 0)
    image = line_art(media / "a.png")
    write_bank(project / "banks", items=[item("a", image="a.png", image_alt="x")])
    assert invoke(runner, "build").exit_code == 0
    cache = read_build_cache(project / "out" / ".ankigen-cache.json")
    [recorded] = cache["last"]["images"]
    info = image.stat()
    times = [info.st_mtime_ns, info.st_ctime_ns] if settled else [None, None]
    assert recorded[2:] == [info.st_size, *times, info.st_ino]
    hashed: list[str] = []
    real = Path.read_bytes

    def reading(path: Path) -> bytes:
        if path.name == "a.png":
            hashed.append(path.name)
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", reading)
    result = invoke(runner, "build")
    assert (result.exit_code, without_versions(result.stdout)) == (
        0,
        "up to date out/demo.en.apkg: 1 note\n",
    )
    assert hashed == ([] if settled else ["a.png"])
