"""A Moodle XML question's texts in bank form: HTML (or Markdown, or plain text) reduced
to bank text, its pictures (embedded `<file encoding="base64">` referenced as
`@@PLUGINFILE@@/name`, pasted `data:` images, a Moodle 1.9 `<image_base64>`) checked
and cleaned by Pillow and stored for the media folder; each loss said as a warning."""

from __future__ import annotations

import base64
import binascii
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ankigen.formats.htmltext import (
    Image,
    Link,
    MarkdownProblem,
    html_to_text,
    markdown_to_text,
    tex_delimiters,
)
from ankigen.formats.model import Problems, ReadOptions, store_image
from ankigen.formats.moodle_xml_writer import PLUGINFILE
from ankigen.formats.xmltree import Node
from ankigen.images.process import ImageProblem
from ankigen.text.html import literal


@dataclass
class Reading:
    problems: Problems
    options: ReadOptions
    media: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class Text:
    text: str
    image: str = ""
    image_alt: str = ""
    pictures: int = 0
    """The pictures the text had, kept or dropped."""


def field_text(node: Node, tag: str, fmt: str, reading: Reading, *, images: bool) -> Text:
    holder = node.child(tag)
    if holder is None:
        return Text("")
    text_node = holder.child("text")
    raw = raw_text(text_node, reading) if text_node is not None else ""
    files = _files(holder, reading) if images else None
    return convert(raw, holder.attrs.get("format") or fmt, holder.line, reading, files)


def raw_text(text_node: Node, reading: Reading) -> str:
    """The content of a `<text>`; markup inside it must be escaped or in CDATA."""
    if text_node.children:
        names = ", ".join(sorted({f"<{c.tag}>" for c in text_node.children}))
        reading.problems.warn(
            text_node.line,
            f"{names} inside <text> is XML, not text: write HTML in <![CDATA[...]]> "
            "or escaped; it was dropped",
        )
    return text_node.content.strip()


def _files(holder: Node, reading: Reading) -> dict[str, tuple[bytes, int]]:
    found: dict[str, tuple[bytes, int]] = {}
    for file_node in holder.all("file"):
        name = file_node.attrs.get("name", "")
        folder = file_node.attrs.get("path", "/") or "/"
        if file_node.attrs.get("encoding", "base64") != "base64":
            reading.problems.add(file_node.line, f"file {name!r}: only base64 encoding is known")
            continue
        try:
            data = base64.b64decode("".join(file_node.content.split()), validate=True)
        except (binascii.Error, ValueError):
            reading.problems.add(file_node.line, f"file {name!r} is not valid base64")
            continue
        found[(folder.strip("/") + "/" + name).lstrip("/")] = (data, file_node.line)
    return found


def convert(
    raw: str,
    fmt: str,
    line: int,
    reading: Reading,
    files: dict[str, tuple[bytes, int]] | None,
    *,
    choice: bool = False,
) -> Text:
    """The text in bank form, its image stored; `files`: the images embedded with it, or
    None where a text holds none. A choice left empty by its pictures is the caller's
    to report: its pictures are not dropped from an item that is not made."""
    problems = reading.problems
    if fmt in ("plain_text", "wiki_like"):
        return Text(tex_delimiters(literal(raw)))
    if fmt == "markdown":
        try:
            converted = markdown_to_text(raw)
        except MarkdownProblem as problem:
            problems.add(line, str(problem))
            return Text("")
    else:
        # moodle_auto_format is HTML whose line breaks are breaks
        markup = raw.replace("\n", "<br>") if fmt == "moodle_auto_format" else raw
        converted = html_to_text(markup)
    for loss in converted.losses():
        problems.warn(line, loss)
    linked = set(_lost_links(converted.links, line, problems))
    if files is None:
        text = tex_delimiters(converted.text)
        if choice and not text:
            return Text("", pictures=converted.pictures)
        for img in converted.images:
            problems.warn(
                line,
                f"image {_file_name(img.src)!r} in a choice or its feedback was dropped: "
                "choices and their feedback are text",
            )
        if converted.drawings:
            problems.warn(
                line,
                "an inline <svg> picture in a choice or its feedback was dropped: choices "
                "and their feedback are text",
            )
        return Text(text, pictures=converted.pictures)
    if converted.drawings:
        problems.warn(
            line,
            "an inline <svg> picture was dropped: an item's image is an embedded image file "
            '(<img src="@@PLUGINFILE@@/...">)',
        )
    if not converted.images:
        for name in sorted(set(files) - linked):
            problems.warn(line, f"embedded file {name!r} is not shown in the text; ignored")
        return Text(tex_delimiters(converted.text), pictures=converted.drawings)
    image, alt = "", ""
    for number, img in enumerate(converted.images):
        if number:
            problems.warn(line, f"only one image per text: dropped {img.shown!r}")
            continue
        if img.inline:
            image, alt = _inline(img, line, reading), img.alt
            continue
        if not img.src.startswith(PLUGINFILE):
            problems.warn(
                line,
                f"image {img.src!r} is not embedded in the file; dropped (ankigen never downloads)",
            )
            continue
        wanted = _file_name(img.src)
        found = files.get(wanted)
        if found is None:
            problems.warn(
                line, f"image {wanted!r} is not embedded in the file (<file name=...>); dropped"
            )
            continue
        image, alt = _store(wanted, found[0], found[1], reading), img.alt
    return Text(tex_delimiters(converted.text), image, alt, converted.pictures)


def _inline(img: Image, line: int, reading: Reading) -> str:
    """A picture written into the text (`data:image/png;base64,...`, as editors paste
    one), stored as an embedded file is; SVG, like an inline `<svg>`, is dropped."""
    kind, data = img.inline_bytes() or ("", b"")
    if not kind.startswith("image/") or kind == "image/svg+xml":
        what = "an SVG drawing" if kind == "image/svg+xml" else "not a picture"
        reading.problems.warn(line, f"inline image {img.shown!r} is {what}; dropped")
        return ""
    return _store(img.shown, data, line, reading)


def old_image(node: Node, stem: Text, reading: Reading) -> Text:
    """The picture of a Moodle 1.9 question, `<image>` with its bytes in `<image_base64>`,
    which Moodle still imports: after the question's text, as its image."""
    named, data_node = node.child("image"), node.child("image_base64")
    name = named.content.strip() if named is not None else ""
    encoded = "".join(data_node.content.split()) if data_node is not None else ""
    if not name:
        return stem
    line = named.line if named is not None else node.line
    if not encoded:
        reading.problems.warn(
            line,
            f"<image> {name!r} is a file of the course it came from, not in this file; dropped",
        )
        return stem
    if stem.image:
        reading.problems.warn(line, f"only one image per text: dropped <image> {name!r}")
        return stem
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        reading.problems.add(line, f"<image_base64> of {name!r} is not valid base64")
        return stem
    stored = _store(name.replace("/", "_"), data, line, reading)
    return replace(stem, image=stored) if stored else stem


def _file_name(src: str) -> str:
    """The name of a file embedded with the text (`@@PLUGINFILE@@/NAME`), else `src`."""
    if not src.startswith(PLUGINFILE):
        return Image(src, "").shown
    return urllib.parse.unquote(src[len(PLUGINFILE) :].split("?")[0]).lstrip("/")


def _lost_links(links: tuple[Link, ...], line: int, problems: Problems) -> Iterator[str]:
    """A warning for each link or sound a bank text cannot carry (its words stay); the
    names of the embedded files they use."""
    for link in links:
        name = _file_name(link.target)
        problems.warn(line, link.lost(name))
        if link.target.startswith(PLUGINFILE):
            yield name


def _store(name: str, data: bytes, line: int, reading: Reading) -> str:
    try:
        return store_image(data, name, reading.options.media_prefix, reading.media)
    except ImageProblem as problem:
        reading.problems.add(line, str(problem))
        return ""
