"""HTML previews of every card, front and back, with the real templates and scripts.

Each deck gets a page; each card on it flips between its sides the way Anki
desktop does it: the card's HTML replaces the previous side's in place, and
its scripts run again.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from ankigen.apkg import notetype
from ankigen.apkg.note import note_content
from ankigen.apkg.render import render_template
from ankigen.bank.model import Bank, outline
from ankigen.bank.project import project_path
from ankigen.bank.workspace import default_media_dir
from ankigen.builder.result import IMAGE_CACHE
from ankigen.checks.run import Known, checked_banks
from ankigen.core.atomic import write_atomic
from ankigen.core.errors import InvalidBanks
from ankigen.core.hashing import content_hash
from ankigen.core.reading import read_regular
from ankigen.images.process import Prepared, image_refs, prepare
from ankigen.images.settings import Settings
from ankigen.text import l10n
from ankigen.translation.coverage import coverage, matrix_html

_SITE = Path(__file__).with_name("site")
MATHJAX = Path(__file__).with_name("mathjax")
"""MathJax as Anki ships it (see its README), served beside the pages as `_mathjax/`."""
MATHJAX_URL = "_mathjax"
_SCRIPT_BLOCK = re.compile(r"<script>.*?</script>", re.DOTALL)


@cache
def site_asset(name: str) -> str:
    """One of the preview's own files (site/): its CSS and scripts."""
    return (_SITE / name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Shared:
    """What every card of a page shares, on the page once: the note type's CSS, and the
    long blocks of its templates (the script, the phrases), which each side names with
    `<!--pv-shared:N-->`, and which the page's controller puts back before it shows it."""

    style: str
    blocks: tuple[str, ...]
    front: str
    back: str
    """The templates, with their blocks named."""

    def sides(self, fields: tuple[str, ...]) -> tuple[str, str]:
        """A note's sides as the page holds them."""
        values = dict(zip(notetype.FIELDS, fields, strict=True))
        return render_template(self.front, values), render_template(self.back, values)

    def whole(self, side: str) -> str:
        """A side as Anki has it (`card_sides`), as the controller makes it."""
        return self.style + _NAMED_BLOCK.sub(lambda m: self.blocks[int(m[1])], side)

    def json(self) -> str:
        """The blocks, for a `<script type="application/json">`: no `<` can end it."""
        return json.dumps(self.blocks, ensure_ascii=False).replace("<", "\\u003c")


_NAMED_BLOCK = re.compile(r"<!--pv-shared:(\d+)-->")


@cache
def shared() -> Shared:
    t = notetype.templates()
    blocks = (_SCRIPT_BLOCK.findall(t.front)[0], l10n.phrases_block())
    front, back = t.front, t.back
    for number, block in enumerate(blocks):
        assert block in t.back, "a shared block is in the templates as it is"
        front = front.replace(block, f"<!--pv-shared:{number}-->")
        back = back.replace(block, f"<!--pv-shared:{number}-->")
    return Shared(f"<style>{t.css}</style>", blocks, front, back)


def _head(title: str) -> str:
    return (
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{site_asset('chrome.css')}</style>"
    )


def page_name(bank: Bank) -> str:
    return f"{bank.topic}.{bank.language}.html"


def _escape_template(markup: str) -> str:
    # a card never contains </template>: author text is escaped; keep it that way
    return markup.replace("</template", "&lt;/template")


@dataclass(frozen=True)
class Card:
    """A card's section of its deck's page; the digest changes with anything shown."""

    item: str
    digest: str
    html: str


@dataclass(frozen=True)
class DeckPage:
    """A deck's page in its parts, so that `serve` can send a changed card alone."""

    language: str
    title: str
    header: str
    cards: tuple[Card, ...]

    def html(self, top: str = "", end: str = "") -> str:
        """The page; `top` goes first in its body, `end` last (`serve`'s problems and
        script), put in place rather than searched for in megabytes of cards."""
        common = shared()
        return (
            "<!doctype html>\n"
            f'<html lang="{self.language}"><head>{_head(self.title)}{common.style}'
            f"<script>{site_asset('mathjax-config.js')}</script>"
            f'<script src="{MATHJAX_URL}/tex-chtml-full.js"></script></head>'
            f'<body class="card card1 pv">{top}{self.header}'
            f'<main class="pv-main">{"".join(card.html for card in self.cards)}</main>'
            f'<script type="application/json" id="pv-shared">{common.json()}</script>'
            f"<script>{site_asset('controller.js')}</script>{end}</body></html>\n"
        )


def deck_page(bank: Bank, images: Prepared | None = None) -> DeckPage:
    """A deck's page: its cards, each shown when it comes near the screen, with Anki's
    MathJax and the note type's CSS and script exactly as the package has them."""
    cards = []
    common = shared()
    # a bank that keeps an adopted deck's note type is shown on ankigen's own card, which
    # the kept one draws from its fields (`apkg.kept`)
    bank = replace(bank, anki_notetype=None)
    for number, item in enumerate(bank.items, start=1):
        content = note_content(bank, item, images.names(bank, item.id) if images else None)
        front, back = common.sides(content.fields)
        digest = content_hash(str(number), item.id, front, back)[:16]
        section = (
            f'<section class="pv-card" data-item="{html.escape(item.id)}" data-digest="{digest}">'
            f'<div class="pv-toolbar"><span>{number}. {html.escape(item.id)}</span>'
            '<button type="button" class="pv-flip" data-show="Show answer" '
            'data-again="Show question">Show answer</button></div>'
            '<div class="pv-qa"></div>'
            f'<template class="pv-front">{_escape_template(front)}</template>'
            f'<template class="pv-back">{_escape_template(back)}</template>'
            "</section>"
        )
        cards.append(Card(item.id, digest, section))
    title = html.escape(bank.deck_name)
    header = (
        f'<header class="pv-header" dir="{bank.direction}"><h1>{title}</h1>'
        f"<p>{len(bank.items)} cards · {html.escape(bank.language)} · "
        '<a href="index.html" dir="ltr">all decks</a> · '
        '<button type="button" class="pv-night">night mode</button></p></header>'
    )
    return DeckPage(bank.language, title, header, tuple(cards))


def index_page(banks: Sequence[Bank], matrix_html: str = "") -> str:
    rows = "".join(
        f'<li><a href="{page_name(b)}">{html.escape(b.deck_name)}</a> ({len(b.items)} cards)</li>'
        for b in sorted(banks, key=lambda b: b.key)
    )
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head>{_head("ankigen preview")}</head>'
        '<body class="pv"><header class="pv-header"><h1>ankigen preview</h1>'
        "<p>Every card, front and back, with the real templates.</p></header>"
        f'{matrix_html}<ul class="pv-decks">{rows}</ul></body></html>\n'
    )


@dataclass(frozen=True)
class Pages:
    """A preview's files by name, made in memory: its deck pages, in their parts, and
    its other files (the index, the images)."""

    decks: dict[str, DeckPage]
    files: dict[str, bytes]
    warnings: int
    """Warnings in the banks (lint lists them)."""

    def all_files(self) -> Iterator[tuple[str, bytes]]:
        for name, deck in self.decks.items():
            yield name, deck.html().encode("utf-8")
        yield from self.files.items()


@dataclass
class Memo:
    """What `serve` keeps from one making of the pages to the next, so that a save
    checks and renders only the decks whose bank changed: each bank's check, and each
    deck's page by what it was made from. For the project file it was made under."""

    project: bytes | None = None
    checks: Known = field(default_factory=Known)
    pages: dict[str, tuple[tuple[object, ...], DeckPage]] = field(default_factory=dict)

    def under(self, banks_dir: Path) -> Memo:
        """This memo, emptied if the project file changed since."""
        try:
            project = read_regular(project_path(banks_dir))
        except OSError:
            project = None
        if project != self.project:
            self.project, self.checks, self.pages = project, Known(), {}
        return self


def preview_pages(
    banks_dir: Path, media: Path | None, image_cache: Path, memo: Memo | None = None
) -> Pages:
    """Every bank of the folder checked, its images prepared as the build prepares them
    (cached in `image_cache`), and a page per deck, with the translation matrix on the
    index, which comes last; InvalidBanks with every problem. With `memo`, what it
    knows is not done again."""
    memo = (memo or Memo()).under(banks_dir)
    checked = checked_banks(banks_dir, memo.checks)
    images = prepare(
        image_refs(map(outline, checked.banks)),
        media or default_media_dir(banks_dir),
        Settings(),
        cache_dir=image_cache,
    )
    if images.diagnostics:
        raise InvalidBanks(checked.diagnostics + images.diagnostics)
    files: dict[str, bytes] = {}
    pages: dict[str, tuple[tuple[object, ...], DeckPage]] = {}
    for bank in sorted(checked.banks, key=lambda b: b.key):
        bank_images = images.for_bank(bank)
        name = page_name(bank)
        made_from = (memo.checks[bank.path][0], bank.path, tuple(n for n, _ in bank_images))
        if name in memo.pages and memo.pages[name][0] == made_from:
            pages[name] = memo.pages[name]
        else:
            pages[name] = (made_from, deck_page(bank, images))
        files.update(bank_images)
    memo.pages = pages
    matrix = matrix_html(coverage(checked))
    files["index.html"] = index_page(checked.banks, matrix).encode("utf-8")
    decks = {name: page for name, (_, page) in pages.items()}
    return Pages(decks, files, checked.warnings)


@dataclass(frozen=True)
class Previewed:
    pages: tuple[Path, ...]
    warnings: int
    """Warnings in the banks (lint lists them)."""


def mathjax_files() -> Iterator[tuple[str, Path]]:
    """MathJax's files by their name on the site (under `_mathjax/`), and where they are."""
    for path in sorted(MATHJAX.rglob("*")):
        if path.is_file() and path.suffix in (".js", ".woff"):
            yield f"{MATHJAX_URL}/{path.relative_to(MATHJAX).as_posix()}", path


def make_preview(banks_dir: Path, out_dir: Path, media: Path | None = None) -> Previewed:
    """The preview's pages and images written into `out_dir`, with MathJax beside them."""
    made = preview_pages(banks_dir, media, out_dir / IMAGE_CACHE)
    written = []
    for name, data in made.all_files():
        write_atomic(out_dir / name, data)
        written.append(name)
    for name, path in mathjax_files():
        data = path.read_bytes()
        target = out_dir / name
        if not (target.is_file() and target.read_bytes() == data):
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data)
    pages = tuple(out_dir / name for name in written if name.endswith(".html"))
    return Previewed(pages, made.warnings)
