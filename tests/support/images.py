"""Images for tests: a picture made on the spot, so no test depends on a file's bytes."""

from __future__ import annotations

from pathlib import Path

from PIL import Image


def line_art(path: Path, transparent: bool = False) -> Path:
    image = Image.new(
        "RGBA" if transparent else "RGB", (400, 300), (255, 255, 255, 0) if transparent else "white"
    )
    for x in range(50, 350):
        image.putpixel((x, 150), (0, 0, 0, 255) if transparent else (0, 0, 0))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, "PNG")
    return path
