"""Images for cards, through Pillow: verified, cleaned, downscaled, named by content.

Anki's media folder is one flat namespace shared by every deck a learner has,
so each output file is named by the hash of its bytes: two different images
never collide and one image is stored once. Camera metadata (EXIF, GPS, XMP,
comments) never leaves the author's machine.
"""

from __future__ import annotations

import hashlib
import io
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ankigen.bank.folder import settled
from ankigen.bank.model import IMAGE_FIELDS
from ankigen.core.atomic import write_cache
from ankigen.core.errors import Diagnostic
from ankigen.core.hashing import content_hash
from ankigen.core.reading import read_regular
from ankigen.images.settings import Settings

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

    from ankigen.bank.model import Bank, Outline

MAX_PIXELS = 40_000_000
JPEG_QUALITY = 85
WEBP_QUALITY = 82
LINE_ART_COLORS = 256


@dataclass(frozen=True)
class ImageRef:
    """Where a bank asks for an image."""

    bank: Bank
    item_id: str
    field: str  # "image" or "explanation_image"
    path: str
    line: int


@dataclass(frozen=True)
class Processed:
    """An image as a package carries it: resized and re-encoded, named by its content."""

    name: str
    """`<hash>.<ext>`: what the note references and the media folder holds."""
    data: bytes
    width: int
    height: int


class ImageProblem(Exception):
    """An image that cannot be used; the message says why."""


def image_refs(outlines: Iterable[Outline]) -> list[ImageRef]:
    return [
        ImageRef(outline.bank, item.id, field, path, line)
        for outline in outlines
        for item in outline.items
        for field, path, line in item.images
    ]


def resolve(media_dir: Path, relative: str) -> Path:
    """The file a bank's image path names, which must lie inside the media folder."""
    if "\0" in relative:  # no file name holds one; the OS refuses it
        raise ImageProblem(f"image path {relative!r} contains a NUL character")
    candidate = Path(relative)
    if (
        not candidate.parts
        or candidate.is_absolute()
        or relative.startswith(("/", "\\"))
        or ":" in candidate.parts[0]
    ):
        raise ImageProblem(f"image path {relative!r} must be relative to the media folder")
    try:
        root = media_dir.resolve()
        target = (root / candidate).resolve()
    except RuntimeError:  # Python 3.11 reports a symbolic link loop this way
        raise ImageProblem(f"image {relative!r} is a symbolic link loop") from None
    if not target.is_relative_to(root):
        raise ImageProblem(f"image path {relative!r} points outside the media folder {media_dir}")
    if not target.is_file():
        raise ImageProblem(f"image {relative!r} not found in the media folder {media_dir}")
    return target


def _open(data: bytes, relative: str) -> PILImage:
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            probe = Image.open(io.BytesIO(data))
            width, height = probe.size
            if width * height > MAX_PIXELS:
                raise ImageProblem(
                    f"image {relative!r} is {width}x{height} pixels, more than the "
                    f"{MAX_PIXELS // 1_000_000} megapixels allowed (a decompression bomb?)"
                )
            probe.verify()
            image = Image.open(io.BytesIO(data))
            image.load()
    except ImageProblem:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageProblem(
            f"image {relative!r} is too large to decode (a decompression bomb?)"
        ) from None
    except Exception:
        raise ImageProblem(f"{relative!r} is not an image Pillow can read") from None
    return image


def verify(media_dir: Path, relative: str) -> None:
    """Raise ImageProblem unless the path is inside the media folder and holds a usable image."""
    _open(resolve(media_dir, relative).read_bytes(), relative)


def _has_transparency(image: PILImage) -> bool:
    if image.mode in ("RGBA", "LA"):
        lowest = image.getchannel("A").getextrema()[0]
        return isinstance(lowest, int | float) and lowest < 255
    return image.mode == "P" and "transparency" in image.info


def _encode(image: PILImage, fmt: str, **options: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def process(data: bytes, relative: str, settings: Settings) -> Processed:
    """Clean, downscale and encode one image."""
    return _processed(_open(data, relative), settings)


# what a clean image's file may say besides its pixels: how it is coded, never who made
# it, where, or with what (Pillow's names)
_NOTHING_ELSE = frozenset(
    "jfif jfif_version jfif_unit jfif_density dpi progressive progression transparency "
    "loop background timestamp duration".split()
)
# lossy formats only: a PNG is encoded again losslessly, to the same bytes every time
_KEPT_FORMATS = {"JPEG": "jpg", "WEBP": "webp"}


def kept_or_processed(data: bytes, relative: str, settings: Settings) -> Processed:
    """An image for a bank's media folder or a file for another tool: its own bytes where
    it is already as `process` makes one (JPEG or WebP, one frame, within the size, no
    metadata or other data), else processed. A lossy image encoded again loses a little each time:
    an export imported back, again and again, would never give the same image."""
    image = _open(data, relative)
    ext = _KEPT_FORMATS.get(str(image.format))
    if (
        ext is not None
        and max(image.size) <= settings.max_side
        and image.mode in ("RGB", "RGBA", "L", "LA", "P")
        and getattr(image, "n_frames", 1) == 1
        and set(image.info) <= _NOTHING_ELSE
        and not image.getexif()
        and _only_pixels(data, ext)
    ):
        name = f"{hashlib.sha256(data).hexdigest()[:20]}.{ext}"
        return Processed(name, data, image.width, image.height)
    return _processed(image, settings)


def _only_pixels(data: bytes, ext: str) -> bool:
    """Whether the file holds nothing Pillow does not show in `info`: no JPEG segment but
    the coding's (an APPn or COM of any tool's) before its scan, no RIFF chunk but the
    image's, and nothing after the image's end."""
    if ext == "webp":
        if data[:4] != b"RIFF" or int.from_bytes(data[4:8], "little") != len(data) - 8:
            return False
        at = 12
        while at + 8 <= len(data):
            kind, size = data[at : at + 4], int.from_bytes(data[at + 4 : at + 8], "little")
            if kind not in (b"VP8 ", b"VP8L", b"ALPH"):
                return False  # VP8X and what it announces: ICC, EXIF, XMP, animation
            at += 8 + size + (size & 1)
        return at == len(data)
    if not data.endswith(b"\xff\xd9"):
        return False
    at = 2
    while at + 4 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        if marker == 0xDA:  # the scan: the coded image follows
            return True
        if 0xE1 <= marker <= 0xEF or marker == 0xFE:
            return False
        at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
    return False


def _processed(image: PILImage, settings: Settings) -> Processed:
    from PIL import Image, ImageOps

    image = ImageOps.exif_transpose(image)  # apply the camera's orientation before EXIF goes
    if image.mode not in ("RGB", "RGBA", "L", "LA", "P"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    if max(image.size) > settings.max_side:
        image.thumbnail((settings.max_side, settings.max_side), Image.Resampling.LANCZOS)
    # a fresh image carries pixels only: no EXIF, GPS, XMP, ICC or comments
    clean = Image.new(image.mode, image.size)
    if image.mode == "P":
        clean.putpalette(image.getpalette() or [])
        if "transparency" in image.info:
            clean.info["transparency"] = image.info["transparency"]
    clean.paste(image)

    transparent = _has_transparency(clean)
    colors = clean.getcolors(LINE_ART_COLORS)
    if transparent or colors is not None:
        if clean.mode == "P" and "transparency" in clean.info:
            clean = clean.convert("RGBA")
        candidates = [("png", _encode(clean, "PNG", optimize=True))]
    else:
        rgb = clean.convert("RGB") if clean.mode != "L" else clean
        candidates = [
            ("jpg", _encode(rgb, "JPEG", quality=JPEG_QUALITY, optimize=True, progressive=True)),
            ("webp", _encode(rgb, "WEBP", quality=WEBP_QUALITY, method=6)),
        ]
    ext, encoded = min(candidates, key=lambda c: (len(c[1]), c[0]))
    name = f"{hashlib.sha256(encoded).hexdigest()[:20]}.{ext}"
    return Processed(name, encoded, clean.width, clean.height)


class ImageCache:
    """Processed images on disk, keyed by the source bytes and the settings."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def get(self, key: str) -> Processed | None:
        if self.folder is None:
            return None
        for path in self.folder.glob(f"{key}--*"):
            name = path.name.split("--", 1)[1]
            try:
                data = read_regular(path)  # anything else was not written by us
            except OSError:
                continue
            if hashlib.sha256(data).hexdigest()[:20] == name.split(".")[0]:
                from PIL import Image

                with Image.open(io.BytesIO(data)) as image:
                    return Processed(name, data, image.width, image.height)
        return None

    def put(self, key: str, processed: Processed) -> None:

        if self.folder is not None:
            write_cache(self.folder / f"{key}--{processed.name}", processed.data)


@dataclass(frozen=True)
class SourceImage:
    """A referenced image file as it was read: enough to tell next time if it changed."""

    path: str
    """Relative to the media folder, as the bank names it."""
    sha256: str
    size: int
    mtime_ns: int | None
    """None, with `ctime_ns`, when the times were too recent to vouch for the content
    (`bank.files.SETTLE_NS`): the next build hashes the file."""
    ctime_ns: int | None
    inode: int

    def as_json(self) -> list[object]:
        return [self.path, self.sha256, self.size, self.mtime_ns, self.ctime_ns, self.inode]


def unchanged_images(recorded: object, media_dir: Path) -> bool:
    """Whether every image a build recorded still has the content it had.

    The content is what counts: a stat that matches in size, both times and inode
    skips hashing; anything else (a copy with `cp -p`, `rsync -a`, an unpacked
    archive, times recorded as too recent) is hashed again.
    """
    if not isinstance(recorded, list):
        return False
    for entry in recorded:
        if not (isinstance(entry, list) and len(entry) == 6 and isinstance(entry[0], str)):
            return False
        try:
            path = resolve(media_dir, entry[0])
            info = path.stat()
            if [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino] == entry[2:]:
                continue
            if hashlib.sha256(path.read_bytes()).hexdigest() != entry[1]:
                return False
        except (ImageProblem, OSError, ValueError):
            return False
    return True


@dataclass(frozen=True)
class Prepared:
    """Every bank's images, processed once for the whole build, and what was wrong."""

    images: dict[tuple[str, str, str], Processed]
    """(bank path, item id, field) -> the processed image."""
    diagnostics: tuple[Diagnostic, ...]
    sources: tuple[SourceImage, ...] = ()
    """Every image file read, for the next build's check that nothing changed."""

    def subset(self, bank: Bank) -> Prepared:
        """Only this bank's images, to hand to the process that builds its deck."""
        return Prepared(
            {key: p for key, p in self.images.items() if key[0] == bank.path}, self.diagnostics
        )

    def names(self, bank: Bank, item_id: str) -> dict[str, str]:
        """The media file names of one item's images, by field; looked up, not scanned,
        since this runs once per item."""
        found = {}
        for field in IMAGE_FIELDS:
            processed = self.images.get((bank.path, item_id, field))
            if processed is not None:
                found[field] = processed.name
        return found

    def for_bank(self, bank: Bank) -> list[tuple[str, bytes]]:
        files = {p.name: p.data for (path, _, _), p in self.images.items() if path == bank.path}
        return sorted(files.items())


def prepare(
    refs: Sequence[ImageRef],
    media_dir: Path,
    settings: Settings,
    cache_dir: Path | None = None,
) -> Prepared:
    """Process every referenced image once; report each unusable one at its bank line."""
    cache = ImageCache(cache_dir)
    done: dict[Path, Processed] = {}
    images: dict[tuple[str, str, str], Processed] = {}
    problems: list[Diagnostic] = []
    read: dict[str, SourceImage] = {}
    # as for banks: a second write within the file system's timestamp step would leave
    # the status of a file written just now as it is
    taken = time.time_ns()
    for ref in refs:
        try:
            source = resolve(media_dir, ref.path)
            if source not in done:
                info = source.stat()  # before reading: a later change shows as a new stat
                data = source.read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                vouching = settled(info, taken)
                mtime, ctime = (info.st_mtime_ns, info.st_ctime_ns) if vouching else (None, None)
                read[ref.path] = SourceImage(
                    ref.path, digest, info.st_size, mtime, ctime, info.st_ino
                )
                key = content_hash(digest, settings.key)
                cached = cache.get(key)
                if cached is None:
                    cached = process(data, ref.path, settings)
                    cache.put(key, cached)
                done[source] = cached
            images[(ref.bank.path, ref.item_id, ref.field)] = done[source]
        except (ImageProblem, OSError) as error:
            problems.append(problem_at(ref, error))
    return Prepared(images, tuple(problems), tuple(read[k] for k in sorted(read)))


def problem_at(ref: ImageRef, error: ImageProblem | OSError) -> Diagnostic:
    """An unusable image, reported at the bank line that names it."""
    if isinstance(error, OSError):
        message = f"cannot read image {ref.path!r}: {error.strerror}"
    else:
        message = str(error)
    return Diagnostic(ref.bank.path, ref.line, "error", f"item {ref.item_id!r}: {message}")


def check(refs: Sequence[ImageRef], media_dir: Path) -> list[Diagnostic]:
    """Verify images without processing them, for `lint`."""
    problems = []
    for ref in refs:
        try:
            verify(media_dir, ref.path)
        except (ImageProblem, OSError) as error:
            problems.append(problem_at(ref, error))
    return problems
