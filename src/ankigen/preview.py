"""HTML previews of every card, front and back, with the real templates and scripts.

Each deck gets a page; each card on it flips between its sides the way Anki
desktop does it: the card's HTML replaces the previous side's in place, and
its scripts run again.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ankigen.apkg.note import note_content
from ankigen.apkg.render import card_sides
from ankigen.bank.model import Bank, outline
from ankigen.bank.workspace import default_media_dir
from ankigen.build.result import IMAGE_CACHE
from ankigen.checks.run import checked_banks
from ankigen.core.atomic import write_atomic
from ankigen.core.errors import InvalidBanks
from ankigen.images.process import Prepared, image_refs, prepare
from ankigen.images.settings import Settings
from ankigen.translation.coverage import coverage, matrix_html

_CHROME_CSS = """
body.pv { margin: 0; }
.pv-header { padding: 1rem; border-bottom: 1px solid #ccc; font-family: system-ui, sans-serif; }
.pv-header h1 { font-size: 1.3rem; margin: 0 0 0.3rem; }
.pv-header p { margin: 0; color: #666; font-size: 0.9rem; }
.pv-card { border-bottom: 1px solid #ccc; padding: 0.5rem 0 1rem; }
.pv-toolbar { display: flex; gap: 0.5rem; align-items: center; padding: 0 1rem;
  font: 14px system-ui, sans-serif; color: #666; }
.pv-toolbar button { font: inherit; padding: 0.3rem 0.8rem; }
.pv-matrix { border-collapse: collapse; margin: 1rem; font: 15px system-ui, sans-serif; }
.pv-matrix th, .pv-matrix td { border: 1px solid #bbb; padding: 0.4rem 0.7rem; text-align: start; }
.pv-decks { font: 16px system-ui, sans-serif; margin: 1rem; }
"""

_CONTROLLER = """
(function () {
  function setInnerHTML(element, markup) {
    element.innerHTML = markup;
    var scripts = Array.prototype.slice.call(element.getElementsByTagName("script"));
    scripts.forEach(function (old) {
      var fresh = document.createElement("script");
      for (var i = 0; i < old.attributes.length; i++) {
        fresh.setAttribute(old.attributes[i].name, old.attributes[i].value);
      }
      fresh.appendChild(document.createTextNode(old.innerHTML));
      old.parentNode.replaceChild(fresh, old);
    });
  }
  document.querySelectorAll(".pv-card").forEach(function (card) {
    var qa = card.querySelector(".pv-qa");
    var flip = card.querySelector(".pv-flip");
    var front = card.querySelector("template.pv-front").innerHTML;
    var back = card.querySelector("template.pv-back").innerHTML;
    var showingBack = false;
    setInnerHTML(qa, front);
    flip.addEventListener("click", function () {
      showingBack = !showingBack;
      setInnerHTML(qa, showingBack ? back : front);
      flip.textContent = flip.getAttribute(showingBack ? "data-again" : "data-show");
    });
  });
  var night = document.querySelector(".pv-night");
  if (night) {
    night.addEventListener("click", function () {
      document.body.classList.toggle("nightMode");
      document.body.classList.toggle("night_mode");
    });
  }
})();
"""


def page_name(bank: Bank) -> str:
    return f"{bank.topic}.{bank.language}.html"


def _escape_template(markup: str) -> str:
    # a card never contains </template>: author text is escaped; keep it that way
    return markup.replace("</template", "&lt;/template")


def deck_page(bank: Bank, images: Prepared | None = None) -> str:
    cards = []
    for number, item in enumerate(bank.items, start=1):
        content = note_content(bank, item, images.names(bank, item.id) if images else None)
        front, back = card_sides(content.fields)
        cards.append(
            f'<section class="pv-card" data-item="{html.escape(item.id)}">'
            f'<div class="pv-toolbar"><span>{number}. {html.escape(item.id)}</span>'
            '<button type="button" class="pv-flip" data-show="Show answer" '
            'data-again="Show question">Show answer</button></div>'
            '<div class="pv-qa"></div>'
            f'<template class="pv-front">{_escape_template(front)}</template>'
            f'<template class="pv-back">{_escape_template(back)}</template>'
            "</section>"
        )
    title = html.escape(bank.deck_name)
    return (
        "<!doctype html>\n"
        f'<html lang="{bank.language}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_CHROME_CSS}</style></head>"
        '<body class="card card1 pv">'
        f'<header class="pv-header" dir="{bank.direction}"><h1>{title}</h1>'
        f"<p>{len(bank.items)} cards · {html.escape(bank.language)} · "
        '<a href="index.html" dir="ltr">all decks</a> · '
        '<button type="button" class="pv-night">night mode</button></p></header>'
        f"<main>{''.join(cards)}</main>"
        f"<script>{_CONTROLLER}</script></body></html>\n"
    )


def index_page(banks: Sequence[Bank], matrix_html: str = "") -> str:
    rows = "".join(
        f'<li><a href="{page_name(b)}">{html.escape(b.deck_name)}</a> ({len(b.items)} cards)</li>'
        for b in sorted(banks, key=lambda b: b.key)
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ankigen preview</title><style>{_CHROME_CSS}</style></head>"
        '<body class="pv"><header class="pv-header"><h1>ankigen preview</h1>'
        "<p>Every card, front and back, with the real templates.</p></header>"
        f'{matrix_html}<ul class="pv-decks">{rows}</ul></body></html>\n'
    )


@dataclass(frozen=True)
class Pages:
    """A preview's files by name (its pages and their images), made in memory."""

    files: dict[str, bytes]
    warnings: int
    """Warnings in the banks (lint lists them)."""


def preview_pages(banks_dir: Path, media: Path | None, image_cache: Path) -> Pages:
    """Every bank of the folder checked, its images prepared as the build prepares them
    (cached in `image_cache`), and a page per deck, with the translation matrix on the
    index, which comes last; InvalidBanks with every problem."""
    checked = checked_banks(banks_dir)
    images = prepare(
        image_refs(map(outline, checked.banks)),
        media or default_media_dir(banks_dir),
        Settings(),
        cache_dir=image_cache,
    )
    if images.diagnostics:
        raise InvalidBanks(checked.diagnostics + images.diagnostics)
    files: dict[str, bytes] = {}
    for bank in sorted(checked.banks, key=lambda b: b.key):
        files[page_name(bank)] = deck_page(bank, images).encode("utf-8")
        files.update(images.for_bank(bank))
    matrix = matrix_html(coverage(checked))
    files["index.html"] = index_page(checked.banks, matrix).encode("utf-8")
    return Pages(files, checked.warnings)


@dataclass(frozen=True)
class Previewed:
    pages: tuple[Path, ...]
    warnings: int
    """Warnings in the banks (lint lists them)."""


def make_preview(banks_dir: Path, out_dir: Path, media: Path | None = None) -> Previewed:
    """The preview's pages and images written into `out_dir`."""
    made = preview_pages(banks_dir, media, out_dir / IMAGE_CACHE)
    for name, data in made.files.items():
        write_atomic(out_dir / name, data)
    pages = tuple(out_dir / name for name in made.files if name.endswith(".html"))
    return Previewed(pages, made.warnings)
