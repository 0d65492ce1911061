"""Property tests: the loaders never crash, and text survives every transformation."""

from __future__ import annotations

import json
import pickle
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ankigen.apkg.package import PackageDeck, PackageNote
from ankigen.bank.model import KeptNotetype
from ankigen.bank.reader import parse_bank
from ankigen.bank.yamltext import yaml_string
from ankigen.checks.parity import parity
from ankigen.checks.rules import Before
from ankigen.core import times
from ankigen.core.errors import Diagnostic
from ankigen.formats.model import ReadOptions
from ankigen.formats.page import PageError, decode_page, parse_page
from ankigen.formats.page import read as read_page
from ankigen.identity.guid import _BASE91, GUID, base91, note_guid
from ankigen.identity.issued import ISSUED_NAME, Issued
from ankigen.identity.resolve import DeckIdentity, _items_one_by_one, resolve
from ankigen.identity.stamp import Stamp
from ankigen.text.html import INLINE_TAGS, inline_html, plain_text
from tests.helpers import REPO, write_build_cache
from tests.support.banktext import EDITS, VALID_BANK, mutate

VALID_PAGE = """\
Quiz title
A description.
1. First question?
   • yes
   • no
2. Second question?
   - a
   - b
   - c
"""

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_diagnostics(problems: list[Diagnostic]) -> None:
    for problem in problems:
        assert problem.line >= 1
        assert problem.severity in ("error", "warning")
        assert problem.message


@SETTINGS
@given(st.binary(max_size=2000))
def test_bank_loader_never_crashes_on_bytes(data: bytes) -> None:
    bank, problems = parse_bank("x.yaml", data)
    check_diagnostics(problems)
    assert bank is None or not [p for p in problems if p.severity == "error"]


@SETTINGS
@given(EDITS)
def test_bank_loader_never_crashes_on_mutated_banks(edits: list[tuple[int, int, str]]) -> None:
    bank, problems = parse_bank(
        "x.yaml", mutate(VALID_BANK, edits).encode("utf-8", "surrogatepass")
    )
    check_diagnostics(problems)
    if bank is not None:
        assert all(2 <= len(item.choices) <= 8 for item in bank.items)
        assert all(1 <= n <= len(item.choices) for item in bank.items for n in item.answer)


@SETTINGS
@given(st.binary(max_size=2000))
def test_page_importer_fails_only_with_page_errors_on_bytes(data: bytes) -> None:
    try:
        page = parse_page(decode_page("p.txt", data), "p.txt")
    except PageError as error:
        assert str(error)
    else:
        assert page.title and page.items


@SETTINGS
@given(EDITS, st.none() | st.integers(2, 8))
def test_page_importer_on_mutated_pages(
    edits: list[tuple[int, int, str]], choices: int | None
) -> None:
    text = mutate(VALID_PAGE, edits)
    try:
        page = parse_page(text, "p.txt", choices)
    except PageError as error:
        assert str(error).startswith("p.txt")
    else:
        for item in page.items:
            assert item.question == item.question.strip()
        data = text.encode("utf-8", "surrogatepass")
        try:
            decode_page("p.txt", data)
        except PageError:
            return  # not text: the importer refuses the whole file
        # a question the importer cannot carry is skipped, with a warning at its line
        source = read_page("p.txt", data, ReadOptions("t", "en", choices=choices))
        assert all(2 <= len(question.choices) <= 8 for question in source.questions)
        assert len(source.questions) + source.skipped == len(page.items)
        assert sum("question skipped" in d.message for d in source.diagnostics) == source.skipped


@SETTINGS
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=200))
def test_yaml_string_round_trips_any_text(text: str) -> None:
    assert yaml.safe_load("key: " + yaml_string(text))["key"] == text


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.extend(attrs)


@SETTINGS
@given(
    st.lists(
        st.sampled_from(
            [*list("<>/=\"' abcdeiopsrtuvwxyz&;:\n"), "<b>", "</b>", "<script>", "<br/>", "<i>"]
        ),
        max_size=40,
    ).map("".join)
)
def test_author_html_only_ever_holds_the_inline_tags(text: str) -> None:
    parser = Tags()
    parser.feed(inline_html(text))
    assert parser.tags <= INLINE_TAGS
    assert parser.attributes == []


@SETTINGS
@given(
    st.text(
        alphabet=st.characters(blacklist_characters="<\r", blacklist_categories=["Cs", "Cc"]),
        max_size=80,
    )
)
@example("&lt;")
@example("&amp;lt; &gt")
def test_text_without_tags_survives_as_text(text: str) -> None:
    """Its bank entities aside: `&lt;`, `&gt;` and `&amp;` are how an author writes the
    characters that would start a tag or an entity (docs/bank-format.md)."""
    meant = re.sub(r"&(lt|gt|amp);", lambda m: _BANK_ENTITIES[m[1]], text)
    assert plain_text(text) == meant.strip() or plain_text(text) == meant


_BANK_ENTITIES = {"lt": "<", "gt": ">", "amp": "&"}


@SETTINGS
@given(
    st.tuples(
        st.text(min_size=1, max_size=20),
        st.text(min_size=1, max_size=8),
        st.text(min_size=1, max_size=20),
    ),
    st.tuples(
        st.text(min_size=1, max_size=20),
        st.text(min_size=1, max_size=8),
        st.text(min_size=1, max_size=20),
    ),
)
def test_guids_depend_on_topic_language_and_id_only(
    a: tuple[str, str, str], b: tuple[str, str, str]
) -> None:
    assert note_guid(*a) == note_guid(*a)
    if a != b:
        assert note_guid(*a) != note_guid(*b)


@SETTINGS
@given(st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 90, 91, 8280, 8281, 8282, 91**9 - 1]))
def test_base91_writes_each_digit_as_one_at_a_time_did(number: int) -> None:
    """GUIDs are forever: the encoding, made faster, gives exactly the old digits."""
    digits = _BASE91
    chars = []
    rest = number
    while rest:
        rest, digit = divmod(rest, len(digits))
        chars.append(digits[digit])
    assert base91(number) == ("".join(reversed(chars)) or digits[0])


PLAIN_TYPES = {type(None): "null", bool: "bool", int: "int", float: "float", str: "str"}


@SETTINGS
@given(
    st.one_of(
        st.sampled_from(
            [
                "~",
                "null",
                "Null",
                "yes",
                "No",
                "on",
                "OFF",
                "true",
                "0",
                "-12",
                "0x1F",
                "0o7",
                "017",
                "1_000",
                "1:30",
                "3.14",
                ".5",
                "-.inf",
                ".NaN",
                "1e5",
                "1.0e+5",
                "2024-01-01",
                "y",
                "n",
            ]
        ),
        st.text(
            alphabet=st.sampled_from(list("0123456789.+-_:eEoxabfnlNuTrY~ ")),
            min_size=1,
            max_size=8,
        ),
    )
)
def test_scalar_types_match_pyyaml(text: str) -> None:
    """Our lazy typing of plain scalars agrees with PyYAML's safe loader."""
    from ankigen.bank.yamltree import compose_file, scalar_type

    document = f"key: {text}\n"
    try:
        expected = yaml.safe_load(document)["key"]
    except (yaml.YAMLError, ValueError):
        return  # not a plain scalar PyYAML can load on its own
    try:
        root = compose_file("x.yaml", document.encode())
    except Exception:
        return
    assert root is not None
    node = root.value[0][1]
    kind = scalar_type(node).rsplit(":", 1)[1]
    if isinstance(expected, bool | int | float | str | type(None)):
        assert kind == PLAIN_TYPES[type(expected)], (text, expected)
    else:  # dates and times: text to us, which is what the bank reads them as
        assert kind in ("str", "timestamp")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
BANK_KEYS = st.sampled_from(
    ["bank", "diagnostics", "items", "outline", "id", "images", "choices", "answer", "question"]
)


def _source(tmp: str) -> object:
    import hashlib

    from ankigen.bank.files import Source

    data = VALID_BANK.encode()
    return Source(Path(tmp) / "x.yaml", data, hashlib.sha256(data).hexdigest())


@SETTINGS
@given(st.binary(max_size=600))
def test_bank_cache_entries_of_random_bytes_are_refused(raw: bytes) -> None:
    import contextlib

    from ankigen.checks.cache_entry import BadEntry, load

    # anything but BadEntry (a crash) fails the test; random bytes are never an entry
    with contextlib.suppress(BadEntry):
        load(_source("/nowhere"), raw, ("en",))  # type: ignore[arg-type]
        raise AssertionError("random bytes were taken for a cache entry")


def _entry_of(source: object, payload: object, items: object, parity: object) -> bytes:
    """A bank cache entry for `source` with these payloads, its header as ankigen writes
    it: only the payloads' shape can tell it from a real one."""
    import marshal
    import zlib

    from ankigen import __version__
    from ankigen.checks.cache_entry import FORMAT, MARSHAL_VERSION
    from ankigen.core.secret import mac

    first, second, third = (
        zlib.compress(marshal.dumps(part, MARSHAL_VERSION)) for part in (payload, items, parity)
    )
    body = first + second + third
    header = {
        "version": __version__,
        "format": FORMAT,
        "digest": source.digest,  # type: ignore[attr-defined]
        "path": str(source.path),  # type: ignore[attr-defined]
        "sources": ["en"],
        "outline": len(first),
        "items": len(second),
    }
    # made with this user's key, as if by ankigen itself: only the shape can tell
    header["checksum"] = mac(json.dumps(header, sort_keys=True).encode(), body)
    return json.dumps(header).encode() + b"\n" + body


@SETTINGS
@given(
    st.dictionaries(BANK_KEYS, JSON, max_size=3)
    | st.fixed_dictionaries({"bank": st.dictionaries(BANK_KEYS, JSON), "diagnostics": JSON}),
    JSON | st.dictionaries(BANK_KEYS, JSON, max_size=3),
    JSON
    | st.lists(st.lists(JSON | st.integers(), max_size=7), max_size=3)
    | st.lists(
        st.tuples(
            st.text(max_size=4),
            st.integers(),
            st.lists(st.integers(), max_size=3).map(tuple),
            st.integers(),
            st.integers(),
            st.integers(),
        ).map(list),
        max_size=3,
    ),
)
def test_bank_cache_entries_of_random_json_are_refused_or_well_formed(
    payload: object, items: object, parity: object
) -> None:
    """Even with a header that matches, only payloads of exactly the right shape are used,
    the outline's alone or with the items', and the parity's."""

    from ankigen.bank.model import Bank, Outline
    from ankigen.checks.cache_entry import BadEntry, load, load_outline, load_parity

    source = _source("/nowhere")
    raw = _entry_of(source, payload, items, parity)
    try:
        facts = load_parity(source, raw, ("en",))  # type: ignore[arg-type]
    except BadEntry:
        pass
    else:
        assert facts is None or all(
            type(key) is str
            and len(value) == 5
            and type(value[1]) is tuple
            and all(type(n) is int for n in (value[0], *value[1], *value[2:]))
            for key, value in facts.items()
        )
    try:
        outlined, problems = load_outline(source, raw, ("en",))  # type: ignore[arg-type]
    except BadEntry:
        pass
    else:
        assert outlined is None or isinstance(outlined, Outline)
        assert all(isinstance(p, Diagnostic) for p in problems)
    try:
        bank, problems = load(source, raw, ("en",))  # type: ignore[arg-type]
    except BadEntry:
        return
    assert bank is None or isinstance(bank, Bank)
    assert all(isinstance(p, Diagnostic) for p in problems)


@SETTINGS
@given(JSON)
def test_build_and_issued_caches_of_any_json_never_crash(content: object) -> None:
    import json
    import tempfile

    from ankigen.builder.cache import BuildCache
    from ankigen.builder.result import CACHE_NAME
    from ankigen.identity.issued import ISSUED_NAME, Issued

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        write_build_cache(out / CACHE_NAME, {"last": content})
        (out / ISSUED_NAME).write_text(json.dumps({"version": 1, "notes": content, "blobs": []}))
        assert all(isinstance(s.mtime, int) for s in Issued(out / ISSUED_NAME).notes.values())
        columns = {"guids": content, "hashes": content, "mtimes": content, "blobs": []}
        (out / ISSUED_NAME).write_text(json.dumps({"version": 2, **columns}))
        cache = BuildCache(out)
        assert cache.unchanged("fingerprint", out) is None
        assert cache.key_if_fresh(out / "x.apkg") is None
        (out / CACHE_NAME).write_text(json.dumps(content))
        BuildCache(out).unchanged("fingerprint", out)
        write_build_cache(out / CACHE_NAME, content)
        BuildCache(out).unchanged("fingerprint", out)
        # the inputs match: every other part of the record is read
        fields = ("media", "decks", "warnings", "standing", "images")
        last = {"inputs": "fingerprint"} | dict.fromkeys(fields, content)
        write_build_cache(out / CACHE_NAME, {"last": last})
        found = BuildCache(out).unchanged("fingerprint", out)
        assert found is None or all(d.path.endswith(".apkg") for d in found.decks)
        # the warnings, made into diagnostics only when read, are diagnostics too
        assert found is None or all(isinstance(w, Diagnostic) for w in found.warnings)
        issued = Issued(out / ISSUED_NAME)
        assert all(isinstance(s.mtime, int) for s in issued.notes.values())


@SETTINGS
@given(
    st.lists(
        st.binary(min_size=1, max_size=12).filter(lambda b: b"/" not in b and b"\x00" not in b),
        min_size=1,
        max_size=5,
        unique=True,
    )
)
def test_file_names_of_any_bytes_never_crash_discovery(names: list[bytes]) -> None:
    import os
    import tempfile

    from ankigen.bank.files import NoBanks, find_banks

    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if name in (b".", b".."):
                continue
            with open(os.path.join(os.fsencode(tmp), name + b".yaml"), "wb") as handle:
                handle.write(b"x: 1\n")
        try:
            paths, problems = find_banks(Path(tmp))
        except NoBanks:
            assert all(name.startswith(b".") for name in names)  # hidden files are no banks
            return
        for problem in problems:
            str(problem).encode("utf-8")  # every message can be printed
        for path in paths:
            str(path).encode("utf-8")


# ---- the format importers: any input ends in diagnostics, never a traceback ----

FORMAT_SAMPLES = {
    "gift": "::t1::Q1? {=a#why ~b ~%50%c ####gen}\n\n$CATEGORY: top/x\n\nQ2 {T#w#r}\n",
    "aiken": "Question?\nA. one\nB) two\nANSWER: B\n\nSecond?\nA. x\nB. y\nANSWER: A, B\n",
    "moodle-xml": (
        '<?xml version="1.0"?>\n<quiz>\n<question type="multichoice">\n'
        "<name><text>n</text></name>\n"
        '<questiontext format="html"><text><![CDATA[<p>Q <b>b</b></p>]]></text></questiontext>\n'
        '<answer fraction="100"><text>a</text><feedback><text>f</text></feedback></answer>\n'
        '<answer fraction="0"><text>b</text></answer>\n</question>\n'
        '<question type="truefalse"><name><text>t</text></name>'
        "<questiontext><text>T?</text></questiontext>"
        '<answer fraction="100"><text>true</text></answer>'
        '<answer fraction="0"><text>false</text></answer></question>\n</quiz>\n'
    ),
    "csv": 'id,question,choice1,choice2,answer,explanation\nx,"Q, q",a,b,"1,2",e\n,Q2,c,d,2,\n',
}
FORMAT_EDITS = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.integers(0, 2),
        st.text(
            alphabet=st.sampled_from(list(' \n:-{}=~#%"<>/&;,\\[]ABT!0123\t\x00é؟')), max_size=6
        ),
    ),
    max_size=6,
)


def import_never_crashes(fmt: str, data: bytes) -> None:
    from ankigen.core.errors import AnkigenError
    from ankigen.formats.bankyaml import bank_yaml
    from ankigen.formats.model import Problems, ReadOptions, assign_ids
    from ankigen.formats.registry import get

    try:
        source = get(fmt).read(f"x.{fmt}", data, ReadOptions("t", "ur", media_prefix="t"))
    except AnkigenError as error:
        assert str(error.message)
        return
    check_diagnostics(list(source.diagnostics))
    for question in source.questions:
        assert 2 <= len(question.choices) <= 8
    text = bank_yaml(source, assign_ids(source, Problems("x")), "t", "ur")
    # whatever was imported is a bank the loader reads without a crash
    _, problems = parse_bank("x.yaml", text.encode("utf-8", "surrogatepass"))
    check_diagnostics(problems)


@SETTINGS
@given(st.sampled_from(sorted(FORMAT_SAMPLES)), st.binary(max_size=1500))
def test_format_importers_never_crash_on_bytes(fmt: str, data: bytes) -> None:
    import_never_crashes(fmt, data)


@SETTINGS
@given(st.sampled_from(sorted(FORMAT_SAMPLES)), FORMAT_EDITS)
def test_format_importers_never_crash_on_mutated_files(
    fmt: str, edits: list[tuple[int, int, str]]
) -> None:
    import_never_crashes(fmt, mutate(FORMAT_SAMPLES[fmt], edits).encode("utf-8", "surrogatepass"))


# ---- export then import keeps any text exactly -------------------------------

LINE_TEXT = st.text(
    alphabet=st.characters(
        blacklist_categories=["Cs", "Cc", "Zl", "Zp"], blacklist_characters="<\u00a0\u0085"
    )
    | st.sampled_from(list("~=#{}:\\[]%&\"'->/ \t")),
    min_size=1,
    max_size=30,
)


def bank_text(lines: list[str]) -> str:
    """Text as a bank holds it: trimmed as a whole."""
    return "\n".join(lines).strip()


@SETTINGS
@given(
    st.sampled_from(["gift", "moodle-xml", "csv"]),
    st.lists(LINE_TEXT, min_size=1, max_size=3),
    st.lists(LINE_TEXT, min_size=2, max_size=8, unique_by=lambda t: t.strip(" \t")),
    st.lists(LINE_TEXT, max_size=2),
    st.data(),
)
def test_any_text_survives_export_and_import(
    fmt: str,
    question: list[str],
    choice_texts: list[str],
    explanation: list[str],
    data: st.DataObject,
) -> None:

    from ankigen.formats.htmltext import text_to_html
    from ankigen.formats.model import Choice, Question, ReadOptions, Source
    from ankigen.formats.registry import get

    texts = [bank_text([t]) for t in choice_texts]
    stem = bank_text(question)
    if not stem or not all(texts) or len(set(texts)) != len(texts):
        return
    correct = data.draw(st.sets(st.integers(0, len(texts) - 1), min_size=1))
    whys = data.draw(st.lists(LINE_TEXT | st.just(""), min_size=len(texts), max_size=len(texts)))
    source = Source(
        path="x.yaml",
        questions=(
            Question(
                line=1,
                name="q",
                question=stem,
                choices=tuple(
                    Choice(t, n in correct, bank_text([w]))
                    for n, (t, w) in enumerate(zip(texts, whys, strict=True))
                ),
                explanation=bank_text(explanation) or None,
            ),
        ),
    )
    fmt_ = get(fmt)
    assert fmt_.write is not None
    back = fmt_.read(f"x.{fmt}", fmt_.write(source, Path(".")), ReadOptions("t", "en"))
    assert back.diagnostics == ()
    (before,), (after,) = source.questions, back.questions

    # a bank spells some texts two ways ("<" and "&lt;" alone both show "<"): the text
    # must come back showing the same, in the spelling an import writes
    def shown(q: Question) -> tuple[object, ...]:
        choices = tuple((text_to_html(c.text), c.correct, text_to_html(c.why)) for c in q.choices)
        return text_to_html(q.question), choices, text_to_html(q.explanation or "")

    assert shown(after) == shown(before)


RICH_PIECES = [
    *list("<>/=\"' abcxyz&;:\n\\()[]`"),
    "```",
    "```python\n",
    "\n```\n",
    "<b>",
    "</code>",
    "<code>",
    "<script>",
    '<span class="k" onclick="x">',
    "\\(",
    "\\)",
    "\\[",
    "\\]",
]


@SETTINGS
@given(st.lists(st.sampled_from(RICH_PIECES), max_size=40).map("".join))
def test_code_blocks_only_ever_hold_pygments_classes_and_math_survives(text: str) -> None:
    from pygments.token import STANDARD_TYPES

    from ankigen.text.markup import CODE_CLASS, problems, rich_html, segments

    html = rich_html(text)
    parser = Tags()
    parser.feed(html)
    assert parser.tags <= INLINE_TAGS | {"div", "pre", "span"}
    allowed = {CODE_CLASS, *STANDARD_TYPES.values()}
    assert all(name == "class" and value in allowed for name, value in parser.attributes)
    list(problems(text))  # never raises
    # every math delimiter outside code blocks reaches the card as written
    # (counted in each piece of prose: two pieces around a code block do not join)
    prose = [s.text for s in segments(text) if s.language is None]
    for delimiter in ("\\(", "\\)", "\\[", "\\]"):
        assert html.count(delimiter) >= sum(piece.count(delimiter) for piece in prose)


# Bank text built from pieces that stress splitting `items:` by its lines: values that
# run over several lines (quoted, flow, block, plain) with lines that look like the
# next item or the end of the list, comments at any indentation, other line breaks,
# document markers, tabs, anchors and tags; most of them valid YAML, some not.
WELL_FORMED_VALUES = [
    "why",
    '"one\n{pad}- looks like the next item\n{pad}  two"',
    '"one\n# looks like a comment\ntwo at the margin"',
    "'one\n{pad}- looks like the next item'",
    "[a,\n{pad}  b]",
    "{{x: 1,\n{pad}y: 2}}",
    "|\n{pad}    block\n\n{pad}    # not a comment\n{pad}    - not an item",
    ">-\n{pad}    folded\n{pad}     - deeper",
    "plain\n{pad}    continued",
    "why # a comment\n# at the margin\n{pad}  # at the keys\n\n",
    '"one\u2028two"',
    '"one\x85two"',
    '"one\rtwo"',
    "&anchor why",
    "!!str why",
    "why\n{pad}  tags: [a, b]\n{pad}  shuffle: no",
    "why\n{pad}  bogus: key",
    '"```nosuchlang\\nx = 1\\n```"',  # a warning: read again every time, to say it
]
RISKY_LINES = st.lists(
    st.sampled_from(
        ['"open', "- ", "-", "  -", "---", "...", "\ttab", "items:", "tags: [x]", "*alias", "]"]
    )
    | st.text(alphabet=st.sampled_from(list(" -:\"'#[]|\r\u2028\x85ab")), max_size=8),
    max_size=2,
)


def _risky_item(number: int, value: str, extra: list[str], indent: int) -> str:
    pad = " " * indent
    lines = [
        f"{pad}- id: item-{number}",
        f'{pad}  question: "Question {number}?"',
        f"{pad}  choices: [a, b, c]",
        f"{pad}  answer: {number % 3 + 1}",
        f"{pad}  explanation: {value.format(pad=pad)}",
        *extra,
    ]
    return "\n".join(lines) + "\n"


ITEM_PIECES = st.tuples(
    st.sampled_from(WELL_FORMED_VALUES), st.just([]) | st.just([]) | st.just([]) | RISKY_LINES
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(ITEM_PIECES, min_size=1, max_size=8),
    st.sampled_from([0, 2, 4]),
    st.integers(1, 400),
    st.sampled_from(["", "---\n", "# head\n", "%YAML 1.1\n---\n"]),
    st.sampled_from(["", "license: CC0\n", "# the end\n", "...\n"]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_items_composed_a_slice_at_a_time_read_as_the_whole_document(
    items: list[tuple[str, list[str]]],
    indent: int,
    batch_bytes: int,
    start: str,
    tail: str,
    newline: str,
) -> None:
    """Whatever the text, reading a bank's items a slice at a time gives the bank, the
    diagnostics and every line number that composing the document whole gives."""
    from unittest import mock

    from ankigen.bank import yamltree

    text = start + 'topic: demo\nlanguage: en\ntitle: "Demo"\nitems:\n'
    text += "".join(_risky_item(n, *piece, indent) for n, piece in enumerate(items)) + tail
    data = text.replace("\n", newline).encode("utf-8")
    with mock.patch.object(yamltree, "BATCH_BYTES", batch_bytes):
        sliced, sliced_problems = parse_bank("x.yaml", data)
    with mock.patch.object(yamltree, "items_layout", lambda text: None):
        whole, whole_problems = parse_bank("x.yaml", data)
    assert sliced_problems == whole_problems
    assert sliced == whole
    if sliced is not None and whole is not None:
        assert sliced.lines == whole.lines
        assert [item.lines for item in sliced.items] == [item.lines for item in whole.items]
        assert [item.line for item in sliced.items] == [item.line for item in whole.items]


EDITS_OF_ITEMS = st.lists(
    st.tuples(
        st.sampled_from(
            ["edit", "insert", "delete", "blank", "comment", "swap", "defaults", "dash"]
        ),
        st.integers(0, 50),
        st.sampled_from(WELL_FORMED_VALUES),
    ),
    min_size=1,
    max_size=4,
)


def _edit_items(
    head: str, pieces: list[str], edits: list[tuple[str, int, str]], indent: int
) -> str:
    for kind, at, value in edits:
        at %= len(pieces) + 1
        if kind == "edit" and at < len(pieces):
            pieces[at] = _risky_item(at + 100, value, [], indent)
        elif kind == "insert":
            pieces.insert(at, _risky_item(len(pieces) + 200, value, [], indent))
        elif kind == "delete" and at < len(pieces) and len(pieces) > 1:
            del pieces[at]
        elif kind in ("blank", "comment") and at < len(pieces):
            pieces[at] = ("\n" if kind == "blank" else "# moved\n") + pieces[at]
        elif kind == "swap" and at + 1 < len(pieces):
            pieces[at], pieces[at + 1] = pieces[at + 1], pieces[at]
        elif kind == "defaults":
            head = head.replace("title:", "shuffle: false\ntitle:", 1)
        elif kind == "dash" and at < len(pieces):  # the item starts a line below its dash
            pad = " " * indent
            pieces[at] = pieces[at].replace(f"{pad}- id:", f"{pad}-\n{pad}  id:", 1)
    return head


# values that make a bank without errors: a bank with errors leaves nothing to reuse
VALID_VALUES = [v for v in WELL_FORMED_VALUES if "bogus" not in v and "&" not in v]


# many examples: the cases that matter (an item reused at a new line) need two edits
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(VALID_VALUES), min_size=1, max_size=8),
    st.sampled_from([0, 2]),
    EDITS_OF_ITEMS,
    EDITS_OF_ITEMS,
)
def test_an_edited_bank_reusing_its_unchanged_items_reads_as_read_afresh(
    items: list[str],
    indent: int,
    first: list[tuple[str, int, str]],
    then: list[tuple[str, int, str]],
) -> None:
    """Items whose lines did not change are taken from the bank as last read, at their
    new lines; the result is the bank, diagnostics and lines of reading it afresh."""
    pieces = [_risky_item(n, value, [], indent) for n, value in enumerate(items)]
    head = _edit_items('topic: demo\nlanguage: en\ntitle: "Demo"\n', pieces, first, indent)
    before, _ = parse_bank("x.yaml", (head + "items:\n" + "".join(pieces)).encode())
    head = _edit_items(head, pieces, then, indent)
    data = (head + "items:\n" + "".join(pieces)).encode()
    previous = before.items if before is not None else ()
    reused, reused_problems = parse_bank("x.yaml", data, previous)
    afresh, afresh_problems = parse_bank("x.yaml", data)
    assert reused_problems == afresh_problems
    assert reused == afresh
    if reused is not None and afresh is not None:
        assert [item.lines for item in reused.items] == [item.lines for item in afresh.items]
        assert [item.line for item in reused.items] == [item.line for item in afresh.items]
        assert [item.chunk for item in reused.items] == [item.chunk for item in afresh.items]
        assert [item.seal for item in reused.items] == [item.seal for item in afresh.items]
        # the parity's rows, by seal, of the items as last read: those of reading afresh
        if before is not None:
            known = Before.of(before, [], parity(before)).parity
            assert parity(reused, known) == parity(afresh)


_NOW = times.clock()
_SANE_TIME = st.integers(times.EARLIEST, _NOW)
_GUID = st.from_regex(GUID, fullmatch=True)
# each a change to one value of a stamp as written: [hash, time, GUID]
_ODD = [
    *((1, bad) for bad in [times.EARLIEST - 1, True, 0, -5, 1.5e9, "1700000000", None]),
    *((1, bad) for bad in [_NOW * 1000, _NOW + times.FUTURE_SLACK + 3600]),
    (1, times.EARLIEST),  # the earliest sane time: not odd at all
    *((2, bad) for bad in ["", "a\n", "a\nb", "x" * 21, "é", 7, None]),
    *((0, bad) for bad in [1, None, ["h"]]),
    *((3, bad) for bad in [[], "row", {"a": 1}, "short", "long"]),
    None,
]


def _odd_row(row: list[object], odd: tuple[int, object]) -> object:
    field, value = odd
    if field < 3:
        return [*row[:field], value, *row[field + 1 :]]
    if value == "short":
        return row[:2]
    return [*row, 1] if value == "long" else value


@settings(SETTINGS, max_examples=50)  # each example tries every odd value
@given(
    st.lists(st.tuples(st.text(max_size=4), _SANE_TIME, _GUID), min_size=1, max_size=6),
    st.one_of(_GUID, st.sampled_from(["", "a b", "é"])),
)
def test_locks_and_issued_stamps_checked_by_column_read_as_checked_one_by_one(
    good: list[tuple[str, int, str]], odd_key: str
) -> None:
    """The lock and the evidence of issued stamps are checked a column at a time when they
    are exactly as written; with any one odd value among them, they must read exactly as
    the checks of each value say."""
    import json
    import tempfile
    from unittest import mock

    from ankigen.core.errors import LockError
    from ankigen.identity import issued as issued_module
    from ankigen.identity import lockfile as lock_module
    from ankigen.identity.issued import Issued
    from ankigen.identity.lockfile import parse_lock

    def parsed(raw: bytes) -> object:
        try:
            lock, problems = parse_lock("ankigen.lock", raw)
        except LockError as error:
            return str(error)
        return [(k, d.items, d.guids) for k, d in lock.decks.items()], problems

    for odd in _ODD:
        items: dict[str, object] = {f"i{n}": list(row) for n, row in enumerate(good)}
        notes: dict[str, object] = {guid: [h, mtime] for h, mtime, guid in good}
        if odd is not None:
            row = _odd_row(list(good[0]), odd)
            items[odd_key] = row
            notes[odd_key] = row[:2] if isinstance(row, list) and odd[0] < 3 else row
        deck = {"name": "Demo", "created": times.EARLIEST, "items": items}
        raw = json.dumps({"version": 2, "decks": {"demo.en": deck}}, indent=1).encode()
        fast = parsed(raw)
        with mock.patch.object(lock_module, "_fast_items", return_value=False):
            assert parsed(raw) == fast, odd

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / ISSUED_NAME
            path.write_text(json.dumps({"version": 1, "notes": notes, "blobs": []}))
            read = Issued(path).notes
            with mock.patch.object(issued_module, "_sane_notes", return_value=None):
                assert Issued(path).notes == read, odd
            # version 2 holds the same values by column: the same notes, either way
            rows = [v if isinstance(v, list) and len(v) == 2 else [v, v] for v in notes.values()]
            columns = {
                "guids": list(notes),
                "hashes": [row[0] for row in rows],
                "mtimes": [row[1] for row in rows],
            }
            path.write_text(json.dumps({"version": 2, **columns, "blobs": []}))
            by_column = Issued(path).notes
            with mock.patch.object(issued_module, "all_guids", return_value=False):
                assert Issued(path).notes == by_column, odd
            if all(isinstance(v, list) and len(v) == 2 for v in notes.values()):
                assert by_column == read, odd


WORDS = st.text(alphabet="ab ", max_size=4)


@SETTINGS
@given(
    st.integers(2, 4),
    st.lists(WORDS, min_size=4, max_size=4),
    WORDS,
    WORDS,
    st.sets(st.sampled_from(["choices", "answer", "why", "question", "explanation"]), max_size=2),
    st.sampled_from(["", "a", "b b"]),
)
def test_parity_in_step_only_where_the_full_comparison_finds_nothing(
    count: int, whys: list[str], question: str, explanation: str, changes: set[str], other: str
) -> None:
    """`in_step` spares reading a translation and its reference only where
    `against_reference` is sure to find nothing; with none of the differences it
    looks for, it does spare it."""
    from ankigen.bank.model import Bank, Item
    from ankigen.checks.across import _reference_index, against_reference
    from ankigen.checks.parity import in_step, parity

    def bank(language: str, item: Item) -> Bank:
        return Bank(f"{language}.yaml", "demo", language, "Demo", (item,))

    whys = whys[:count]
    ref = Item(
        "one",
        f"Q {question}",
        tuple(f"c{n}" for n in range(count)),
        (1,),
        f"E {explanation}",
        whys=tuple(whys) if any(whys) else (),
    )
    translated_whys = [why and "translated" for why in whys]
    if "why" in changes and any(whys):
        translated_whys[[bool(w) for w in whys].index(True)] = ""
    translated = Item(
        "one",
        # in another case and spacing, the reference's text is still its text
        f"q  {question.upper()}" if "question" in changes else f"Frage {other}",
        tuple(f"t{n}" for n in range(count + ("choices" in changes))),
        (2,) if "answer" in changes else (1,),
        f"e {explanation} " if "explanation" in changes else f"Erklärung {other}",
        whys=tuple(translated_whys) if any(translated_whys) else (),
    )
    found = list(
        against_reference(
            bank("de", translated), bank("en", ref), _reference_index(bank("en", ref))
        )
    )
    step = in_step(parity(bank("de", translated)), parity(bank("en", ref)))
    if found:
        assert not step
    differs = changes - ({"why"} if not any(whys) else set())
    assert step == (not differs)


@SETTINGS
@given(
    st.text(alphabet="aZz09_'’- \t\n.,;:!?\"()AbcXyIİıΣσς", max_size=80)
    | st.text(alphabet=st.characters(max_codepoint=127), max_size=80)
)
@example("Don't re-shard: a-0 b_c x--y 'q' 9z z9 Z-Z A'B-c")
def test_words_of_ascii_text_are_those_of_the_unicode_pattern(text: str) -> None:
    """`langid.words` reads ASCII text with a plain-range pattern: the same words, lowered,
    as the Unicode letter pattern gives (non-ASCII text takes that one)."""
    from ankigen.text import langid

    assert langid.words(text) == [word.lower() for word in langid._WORD.findall(text)]


IDS = st.sampled_from(["a", "b", "c", "d", "e"])


@SETTINGS
@given(
    st.lists(IDS, min_size=1, max_size=5, unique=True),
    st.none() | st.dictionaries(IDS, st.integers(1, 3), max_size=5),
    st.dictionaries(IDS, st.lists(IDS, max_size=2, unique=True), max_size=3),
    # 0: issued as the lock has it, the usual case
    st.dictionaries(st.sampled_from(["g-a", "g-b", "g-x"]), st.integers(0, 9), max_size=3),
)
def test_identities_looked_up_by_column_are_those_found_one_by_one(
    ids: list[str],
    locked: dict[str, int] | None,
    formerly: dict[str, list[str]],
    newest: dict[str, int],
) -> None:
    """A deck whose items all kept their ids takes every identity from the lock a column
    at a time; any deck gives the identities the item-by-item resolution gives."""

    from ankigen.bank.model import outline
    from ankigen.identity.lockfile import DeckLock, Lock

    items = [
        {"id": i, "question": f"Q {i}?", "choices": ["x", "y"], "answer": 1, "explanation": "E."}
        | (
            {"formerly": former}
            if (former := [f for f in formerly.get(i, []) if f not in ids])
            else {}
        )
        for i in ids
    ]
    text = yaml.safe_dump({"topic": "demo", "language": "en", "title": "T", "items": items})
    bank, problems = parse_bank("demo.yaml", text.encode())
    assert bank is not None, problems
    outlined = outline(bank)
    lock = Lock()
    if locked is not None:
        lock.decks["demo.en"] = DeckLock(
            "T",
            1,
            items={i: Stamp(f"h{n}", 100 + n) for i, n in locked.items()},
            guids={i: f"g-{i}" for i in locked},
        )
    issued = Issued(Path("/nonexistent/issued.json"))
    previous = lock.decks.get("demo.en")
    as_locked = {g: previous.items[i] for i, g in previous.guids.items()} if previous else {}
    issued.notes = {
        guid: as_locked.get(guid, Stamp("h", 1)) if not mtime else Stamp("h", mtime)
        for guid, mtime in newest.items()
    }
    [deck] = resolve([outlined], lock, issued).values()
    assert deck.items == _items_one_by_one(outlined, previous, ("demo", "en"), issued)
    assert deck.guids == [item.guid for item in deck.items.values()]
    # held by column one way only: made from its items, it is the same identity
    assert deck == DeckIdentity.of(
        deck.key, deck.previous_key, deck.previous, deck.deck_id, deck.items
    )
    # as sent to and from worker processes, by column
    assert pickle.loads(pickle.dumps(deck)) == deck
    sent = pickle.loads(pickle.dumps(outlined))
    assert sent == outlined and {type(i).__name__ for i in sent.items} == {"ItemOutline"}
    assert pickle.loads(pickle.dumps(previous)) == previous
    empty = DeckIdentity("demo.en", None, DeckLock("T", 1), 7, (), {})
    assert pickle.loads(pickle.dumps(empty)) == empty
    # a reuse key taken from what `resolve` found is the one made note by note
    from ankigen.bank.files import SourceDigest
    from ankigen.builder.deckplan import reuse_key
    from ankigen.images.process import Prepared

    source = SourceDigest(Path("banks/demo/en.yaml"), "0" * 64)
    keys = [
        reuse_key(source, deck, issued, Stamp("t", 1), Prepared({}, ()), previous, **how)
        for how in ({}, {"as_resolved": True})
    ]
    assert keys[0] == keys[1]


# Spellings of each value of an item: some are read by the fast path for plain items,
# the others (nulls, quotes that change a type, markup, invisible or overlong text,
# lookalike choices, lists and mappings) must fall to the full reading, which reports.
_PLAIN_ITEM = {
    "id": "an-id",
    "question": "Plain?",
    "choices": "[a, b, c]",
    "answer": "2",
    "explanation": "Because.",
}
_ITEM_VARIANTS = {
    "id": ["'an-id'", '"an-id"', "An-Id", "a_b", "~", "''", "x" * 101, "[a]", "7", "a--b"],
    "question": [
        '"Quoted?"',
        "'Single'",
        "|\n      Block\n      text",
        ">-\n      Fold",
        "null",
        '""',
        "'  '",
        '"<b></b>"',
        '"\\u200b"',
        "'<b>Bold</b> q'",
        "'`code`'",
        "'a \\(x\\)'",
        "'a \\( x'",
        "'a \\) b'",
        "'" + "q" * 10_001 + "'",
        "[x]",
        "{a: 1}",
        "!!str 5",
        "5",
        "'. . .'",
        '"tab\\there"',
        "'a < b'",
        "' padded  '",
    ],
    "choices": [
        "[a, b]",
        "[a, b, c, d]",
        "[a]",
        "[a, a]",
        "[café, cafe\u0301]",
        "['two  words', two words]",
        "[a, ~]",
        "[a, [b]]",
        "[a, {text: b, why: c}]",
        "[a, b, c, d, e, f, g, h, i]",
        "a",
        "\n      - x\n      - y\n      - z",
        "[a, '']",
        "[a, '<i></i>']",
        "[a, B, 'c']",
        "[a, b, '" + "c" * 2_001 + "']",
        "[a, b, 'x`y`']",
        "[a, 'b \\( c']",
        "[]",
    ],
    "answer": [
        "1",
        "3",
        "0",
        "4",
        "01",
        "'1'",
        '"2"',
        "!!int 1",
        "!!float 2",
        "!!null 1",
        "!!str 2",
        "[1]",
        "[1, 2]",
        "1.0",
        "yes",
        "~",
        "+1",
        "0x1",
        "1_0",
        "2 # a comment",
    ],
    "explanation": ["''", "'Why `x`'", "[why]", "Multi\n      line", "~", "'\\n'", "'x \\[ y'"],
    None: [""],
}
# a key spelled as another, or as no key at all
_KEY_RENAMES = [(key, name) for key in _PLAIN_ITEM for name in [*_PLAIN_ITEM, "Id", "tags", "[id]"]]
_MORE_LINES = ["", "    tags: [t]\n", "    question: Again?\n", "    extra: x\n"]


@settings(SETTINGS, max_examples=40)  # each example tries every variant
@given(
    st.permutations(list(_PLAIN_ITEM)),
    st.lists(st.sampled_from(["{}", '"{}"', "'{}'"]), min_size=5, max_size=5),
    st.sampled_from(["", "shuffle: false\nrecall: true\n"]),
    st.sampled_from([0, 2]),
)
def test_plain_items_read_fast_as_the_full_reading_reads_them(
    order: list[str], spellings: list[str], defaults: str, indent: int
) -> None:
    """An item of the five required keys, all plain, is read without the full reading's
    machinery: it must give the very item (lines, seal and all) and say nothing, and any
    other item must be read in full and reported on as before."""
    pad = " " * indent
    variants = [(key, value) for key, values in _ITEM_VARIANTS.items() for value in values]
    variants += [(None, more) for more in _MORE_LINES]
    variants += [(f"={key}", name) for key, name in _KEY_RENAMES if key != name]
    for key, variant in variants:
        variant = variant.replace("\n      ", "\n" + pad + "      ")  # continued lines
        values = {**_PLAIN_ITEM, **({key: variant} if key in _PLAIN_ITEM else {})}
        names = {k: variant if key == f"={k}" else k for k in _PLAIN_ITEM}
        lines = [
            f"{pad}    {spelling.format(names[k])}: {values[k]}"
            for spelling, k in zip(spellings, order, strict=True)
        ]
        item = f"{pad}  -" + "\n".join(lines)[3 + indent :] + "\n"
        item += variant.replace("    ", pad + "    ") if key is None else ""
        text = f"topic: demo\nlanguage: en\ntitle: Demo\n{defaults}items:\n{item}"
        text += f"{pad}  - id: zz\n{pad}    question: Q?\n{pad}    choices: [a, b]\n"
        text += f"{pad}    answer: 1\n{pad}    explanation: E.\n"
        fast, full, read_fast = _parsed_both_ways(text.encode(), "read_plain_item")
        if not variant:
            assert read_fast == [True, True]  # the plain items are read fast
        _same_banks(fast, full, (key, variant))


_CHECKED_PIECES = [
    "plain words",
    "{0}",
    "%s",
    "%(name)s",
    "${x}",
    "[[x]]",
    "__X__",
    "_AIU_PROTECTED_1",
    '<x id="1"/>',
    "\ufffd",
    "\u202e",
    "\u2066",
    "_",
    "{",
    "%",
    "[",
    "<",
    "`{0}`",
    "<code>%s</code>",
    "\\(x_{1}\\)",
    "```\n{0}\n```",
    "```python\n%s\n```",
    "\n",
    " ",
]


_CHECKED_TEXT = st.lists(st.sampled_from(_CHECKED_PIECES), min_size=1, max_size=6).map("".join)


@SETTINGS
@given(st.lists(_CHECKED_TEXT, min_size=8, max_size=24), _CHECKED_TEXT)
def test_checks_of_every_text_find_what_one_text_at_a_time_finds(
    texts: list[str], description: str
) -> None:
    """Placeholders and bidirectional controls are looked for in every text at once:
    the same warnings, in the same order, as looking in each text by itself."""
    from unittest import mock

    from ankigen.bank.model import Bank, Item
    from ankigen.checks import rules as lint

    items = tuple(
        Item(
            id=f"i{n}",
            question=chunk[0],
            choices=tuple(chunk[1:5]),
            answer=(1,),
            explanation=chunk[-1],
            whys=("", chunk[5], "", chunk[6]),  # a choice's why: the text under it
        )
        for n, chunk in enumerate(texts[i : i + 8] for i in range(0, len(texts) - 7, 8))
    )
    bank = Bank(
        path="x.yaml",
        topic="t",
        language="en",
        title=texts[0],
        description=description,
        items=items,
    )
    found = [list(lint.placeholders(bank)), list(lint.bidi_controls(bank))]
    with mock.patch.object(lint, "_texts_with", lambda bank, may_hold: lint._texts(bank)):
        assert [list(lint.placeholders(bank)), list(lint.bidi_controls(bank))] == found


@SETTINGS
@given(
    st.lists(
        st.sampled_from(["a", "é", " ", "'", '"', "&", "<", ">", "<b>", "[", "[sound:x]", "\r\n"])
        | st.sampled_from(["\n", "\r", "&quot;", "&#x27;", "`", "\u2028", "\x85", "&amp;", "]"])
        | st.text(max_size=3),
        max_size=12,
    ).map("".join)
)
@example("[sound:x.mp3] and [latex]x[/latex]")
@example('it\'s "quoted"\r')
def test_text_nothing_would_change_is_rendered_as_it_is(text: str) -> None:
    """Author text with nothing to escape, restore or neutralize is its own HTML: the
    same as escaping it and putting back what may stay."""
    from ankigen.text.html import _inline_html, anki_markup_as_text

    assert inline_html(text) == anki_markup_as_text(_inline_html(text))


# An item as `ankigen import` writes it, which `fastread.read_text_item` reads from its text;
# each variant below changes one thing, and is read from the text only where libyaml
# would read the very same item.
_TEXT_ITEM = (
    "{d}- id: {id}\n"
    "{d}  question: {question}\n"
    "{d}  choices:\n"
    "{choices}"
    "{d}  answer: {answer}\n"
    "{d}  explanation: {explanation}\n"
)
_TEXT_VALUES = {
    "id": "an-id",
    "question": '"Plain?"',
    "choices": ['"a"', '"b"', '"c"'],
    "answer": "2",
    "explanation": '"Because."',
}
_TEXT_VARIANTS: dict[str, list[Any]] = {
    "id": ["'an-id'", '"an-id"', "null", "7", "a--b", "-a", "an-id  ", "an-id # c", "x" * 101],
    "question": [
        "Plain?",
        "'Single?'",
        '"Two"  ',
        '"With # and : inside"',
        '"a" # comment',
        '"Escaped \\" quote"',
        '"Back\\\\slash"',
        '"Tab\there"',
        '"\t"',
        '"Bell\x07"',
        '"Del\x7f"',
        '"C1\x9b"',
        '"Nbsp\xa0and\u200b"',
        '"Bom\ufeff"',
        '"Private\ue000"',
        '"Emoji \U0001f600"',
        '"Bidi \u202e"',
        '""',
        '"   "',
        '"null"',
        '"~"',
        '"<b></b>"',
        '"`code`"',
        '"a \\(x\\)"',
        '"' + "q" * 10_001 + '"',
        '"Unclosed',
        '"a" "b"',
        "'It''s'",
        '"x"\n{d}    "continued"',
    ],
    "choices": [
        ['"a"'],
        ['"a"'] * 2,
        ['"a"', '"A"', '"a "'],
        [f'"c{n}"' for n in range(9)],
        ['"a"', "b"],
        ['"a"', "'b'"],
        ['"a"', '""'],
        ['"a"', '"' + "c" * 2_001 + '"'],
        ['"café"', '"cafe\u0301"'],
        ['"a"', '"b" # c'],
        ['"a"', '"b"  '],
    ],
    "answer": ["0", "4", "3", "01", "'1'", "1 # c", "[1]", "~", "1.0", "2  "],
    "explanation": ['"x"  ', "Plain.", '""', '"Why `x`"', '"line\\nbreak"'],
}
# the item's lines as a whole: what surrounds them, and its layout
_TEXT_LAYOUTS = [
    "",  # as written
    "indent+2",  # every line two spaces deeper
    "choices+2",  # the choices' dashes two deeper
    "choices-2",  # the choices' dashes level with the keys (compact)
    "choices-4",  # the choices' dashes level with the item's dash
    "choices-1",  # the choices' dashes between the item's dash and its keys
    "uneven",  # the second choice's dash deeper than the first's
    "keys+1",  # the keys one space deeper than the dash's mapping
    "comments",  # a comment and a blank line after the item
    "inner comment",  # a comment between two choices
    "crlf",
    "tabs",  # a tab after a key's colon
    "no newline",  # the file ends on the item's last line
    "swapped",  # answer before choices
    "extra key",
    "twice",  # a key given twice
]


def _text_item(values: dict[str, Any], layout: str) -> tuple[str, str]:
    d = "  "
    choice_pad = d + "    "
    if layout == "indent+2":
        d = choice_pad = "    "
        choice_pad += "    "
    elif layout == "choices+2":
        choice_pad += "  "
    elif layout == "choices-2":
        choice_pad = d + "  "
    elif layout == "choices-4":
        choice_pad = d
    elif layout == "choices-1":
        choice_pad = d + " "
    choices = "".join(f"{choice_pad}- {c}\n" for c in values["choices"])
    if layout == "uneven":
        choices = choices.replace(f"\n{choice_pad}-", f"\n{choice_pad}  -", 1)
    if layout == "inner comment":
        choices = choices.replace("\n", f"\n{choice_pad}# between\n", 1)
    fields = {**values, "choices": choices, "d": d}
    fields["question"] = fields["question"].replace("{d}", d)
    item = _TEXT_ITEM.format(**fields)
    if layout == "keys+1":
        item = item.replace(f"\n{d}  ", f"\n{d}   ")
    elif layout == "comments":
        item += f"\n{d}  # a comment\n# another\n\n"
    elif layout == "crlf":
        item = item.replace("\n", "\r\n")
    elif layout == "tabs":
        item = item.replace("answer: ", "answer:\t")
    elif layout == "swapped":
        head, _, tail = item.partition(f"{d}  choices:\n")
        listed, _, rest = tail.partition(f"{d}  answer:")
        answer, _, rest = rest.partition("\n")
        item = f"{head}{d}  answer:{answer}\n{d}  choices:\n{listed}{rest}"
    elif layout == "extra key":
        item += f"{d}  tags: [t]\n"
    elif layout == "twice":
        item += f"{d}  answer: 1\n"
    head = "topic: demo\nlanguage: en\ntitle: Demo\nitems:\n"
    return head, item


def _parsed_both_ways(data: bytes, reader: str = "read_text_item") -> tuple[Any, Any, list[bool]]:
    """The bank read with one of `bank`'s fast readers (the items read from their text,
    by default), and without it; and whether the reader read each item it was given."""
    from unittest import mock

    from ankigen.bank import reader as bank_module

    read: list[bool] = []
    real = getattr(bank_module, reader)

    def counting(*args: Any) -> Any:
        item = real(*args)
        read.append(item is not None)
        return item

    with mock.patch.object(bank_module, reader, counting):
        fast = parse_bank("x.yaml", data)
    with mock.patch.object(bank_module, reader, return_value=None):
        slow = parse_bank("x.yaml", data)
    return fast, slow, read


def _same_banks(fast: Any, slow: Any, why: object) -> None:
    assert fast[1] == slow[1], why
    assert fast[0] == slow[0], why
    if fast[0] is not None:
        for quick, full in zip(fast[0].items, slow[0].items, strict=True):
            assert (quick.line, quick.lines, quick.line_keys) == (
                full.line,
                full.lines,
                full.line_keys,
            ), why
            assert (quick.chunk, quick.seal) == (full.chunk, full.seal), why


@settings(SETTINGS, max_examples=1)  # one run tries every variant in every layout
@given(st.just(None))
def test_items_read_from_their_text_as_libyaml_reads_them(_: None) -> None:
    """An item laid out as ankigen writes it is read from its text without libyaml: it must
    be the very item libyaml's nodes give (lines, chunk and seal), with the same problems
    said of the bank, and any other item is left to libyaml."""
    variants: list[tuple[str | None, Any]] = [(None, None)]
    variants += [(key, value) for key, values in _TEXT_VARIANTS.items() for value in values]
    for layout in _TEXT_LAYOUTS:
        for key, variant in variants:
            values = {**_TEXT_VALUES, **({key: variant} if key else {})}
            head, item = _text_item(values, layout)
            _, other = _text_item({**_TEXT_VALUES, "id": "zz"}, layout)
            for text in (head + item + other, head + other + item):
                if layout == "no newline":
                    text = text.rstrip("\n")
                fast, slow, text_read = _parsed_both_ways(text.encode())
                _same_banks(fast, slow, (layout, key, variant))
                if key is None and layout in ("", "indent+2", "comments", "no newline"):
                    assert text_read and all(text_read), (layout, text_read)


_TEXT_CHARS = st.characters(codec="utf-8", exclude_categories=["Cs"])


@settings(SETTINGS)
@given(
    st.lists(st.text(_TEXT_CHARS, max_size=12), min_size=4, max_size=4),
    st.integers(1, 3),
    st.sampled_from(["an-id", "b7", "x-1-y"]),
)
def test_any_quoted_text_is_read_from_the_item_as_libyaml_reads_it(
    texts: list[str], answer: int, item_id: str
) -> None:
    """Any characters between the quotes (quotes, backslashes, controls, line breaks of
    every kind, invisible ones): read from the text only where libyaml reads the same."""
    question, *choices = texts
    values = {
        "id": item_id,
        "question": f'"{question}"',
        "choices": [f'"{c}"' for c in choices],
        "answer": str(answer),
        "explanation": f'"{texts[1]}."',
    }
    head, item = _text_item(values, "")
    fast, slow, text_read = _parsed_both_ways((head + item).encode())
    _same_banks(fast, slow, texts)
    simple = all(
        t.isascii() and t.isprintable() and not set(t) & set('"\\`') and t.strip() not in NULLS
        for t in texts
    )
    if simple and slow[0] is not None and not slow[1]:
        assert text_read == [True], texts  # and such items are read from their text


NULLS = ("", "~", "null", "Null", "NULL")


_SHIPPED_BANK = (REPO / "banks" / "fsdp" / "en.yaml").read_bytes()
_EDITS = [
    b'"', b"'", b"\\", b"\n", b" ", b"\t", b"#", b"- ", b": ", b"\r", b"\x07", b"~",
    "\u2028".encode(), "\ufeff".encode(), b"&a ", b"*a", b"!!str ", b"`", b"<b>", b"''",
    b"\n  - id: x\n", b"answer: 2", b"choices:", b"    ", b'\n      - "c"', b"[", b"{",
]  # fmt: skip


@settings(SETTINGS)
@given(st.lists(st.tuples(st.integers(0, len(_SHIPPED_BANK)), st.sampled_from(_EDITS)), max_size=4))
def test_any_edit_of_a_shipped_bank_reads_the_same_from_text_and_from_libyaml(
    edits: list[tuple[int, bytes]],
) -> None:
    """A shipped bank (every item laid out as ankigen writes it) with a few characters put
    in anywhere: read from the items' text where possible, it must say and give what
    libyaml's reading says and gives."""
    data = _SHIPPED_BANK
    for at, text in edits:
        data = data[:at] + text + data[at:]
    fast, slow, _ = _parsed_both_ways(data)
    _same_banks(fast, slow, edits)


_LOCK_TEXT = st.text(alphabet=st.sampled_from(list('ab ."\\/é\u2028\x7f\x01')), max_size=4)
LOCK_EDITS = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.integers(0, 2),
        st.one_of(
            st.text(alphabet=st.sampled_from(list(' \n,:[]{}"\\0123456789aé')), max_size=4),
            st.sampled_from(["\\u0061", "\\/", "  ", ",\n", '"i0": ["h", 1700000000, "g"],\n']),
        ),
    ),
    max_size=3,
)


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(["demo.en", "demo.fr", "other.pt-BR"]),
        st.tuples(
            _LOCK_TEXT,
            _LOCK_TEXT,
            st.dictionaries(_LOCK_TEXT, st.tuples(_LOCK_TEXT, _SANE_TIME, _GUID), max_size=4),
        ),
        max_size=3,
    ),
    LOCK_EDITS,
)
def test_lock_entries_are_taken_as_written_only_where_that_is_their_text(
    decks: dict[str, tuple[str, str, dict[str, tuple[str, int, str]]]],
    edits: list[tuple[int, int, str]],
) -> None:
    """A lock read keeps the text of each entry laid out as this version writes it, which
    a build then writes instead of making it again: whatever the file, a text kept must be
    exactly what `deck_text` makes of the entry read."""
    from ankigen.core.errors import LockError
    from ankigen.identity.lockfile import DeckLock, Lock, deck_text, parse_lock

    lock = Lock(Stamp("ab" * 8, times.EARLIEST))
    for key, (name, path, items) in decks.items():
        entry = lock.decks[key] = DeckLock(name, times.EARLIEST, path)
        for item_id, (digest, mtime, guid) in items.items():
            entry.items[item_id] = Stamp(digest, mtime)
            entry.guids[item_id] = guid
    written = lock.to_bytes()
    read, problems = parse_lock("ankigen.lock", written)
    assert not problems and read.to_bytes(read.texts) == written
    # all entries are kept as written, unless an id or hash needs an escape (GUIDs never)
    plain = all(
        json.dumps(text) == f'"{text}"'
        for entry in read.decks.values()
        for text in (*entry.items, *(stamp.hash for stamp in entry.items.values()))
    )
    assert set(read.texts) == (set(read.decks) if plain else set())
    try:
        mutated, problems = parse_lock(
            "ankigen.lock", mutate(written.decode(), edits).encode("utf-8", "surrogatepass")
        )
    except LockError:
        return
    for key, (entry, text) in mutated.texts.items():
        assert mutated.decks[key] is entry and text == deck_text(key, entry)
    assert not problems or not mutated.texts


@SETTINGS
@given(st.integers(-(10**10), 10**11), st.text(alphabet="0123456789abcdef", max_size=64))
def test_a_version_is_the_date_of_its_time_and_its_digest(mtime: int, digest: str) -> None:
    """Versions format the date of a day once for all the notes stamped that day: it must
    be the date of each one's own time."""
    import time

    from ankigen.identity.versions import version_string

    day = time.strftime("%Y.%m.%d", time.gmtime(mtime))
    assert version_string(mtime, digest) == f"{day}+{digest[:8]}"


_TEXTS = st.text(max_size=4)
_NOTES = st.builds(
    lambda guid, fields, tags, mtime: PackageNote(guid, tuple(fields), tuple(tags), mtime),
    _TEXTS,
    st.lists(_TEXTS, max_size=3),
    st.lists(_TEXTS, max_size=2),
    st.integers(0, 3),
)


@SETTINGS
@given(
    st.lists(_NOTES, max_size=3),
    st.data(),
)
def test_a_package_key_tells_apart_any_two_packages(notes: list[Any], data: st.DataObject) -> None:
    """Equal packages have one key, and a package that differs in any field of its own or
    of a note has another: the key decides whether a package in place is rewritten."""
    import dataclasses

    from ankigen.builder.deckplan import package_key

    package = PackageDeck(7, "Deck", "About", tuple(notes), 1, 2, ((1, "P", ""),))
    same = dataclasses.replace(package, notes=tuple(dataclasses.replace(n) for n in notes))
    assert package_key(same) == package_key(package)
    deck_field = data.draw(st.sampled_from([f.name for f in dataclasses.fields(PackageDeck)]))
    if deck_field == "notes" and notes:
        n = data.draw(st.integers(0, len(notes) - 1))
        note_field = data.draw(st.sampled_from(["guid", "fields", "tags", "mtime"]))
        value = data.draw(
            {
                "guid": _TEXTS,
                "fields": st.lists(_TEXTS, max_size=3).map(tuple),
                "tags": st.lists(_TEXTS, max_size=2).map(tuple),
                "mtime": st.integers(0, 3),
            }[note_field]
        )
        changed_note = dataclasses.replace(notes[n], **{note_field: value})
        other = dataclasses.replace(
            package, notes=(*package.notes[:n], changed_note, *package.notes[n + 1 :])
        )
    elif deck_field == "notes":
        other = dataclasses.replace(package, notes=(data.draw(_NOTES),))
    elif deck_field in ("name", "description"):
        other = dataclasses.replace(package, **{deck_field: data.draw(_TEXTS)})
    elif deck_field == "parents":
        other = dataclasses.replace(package, parents=((1, data.draw(_TEXTS), ""),))
    elif deck_field == "kept":
        kept = KeptNotetype(
            id=data.draw(st.integers(1, 3)),
            name="MC",
            fields=("Q", "A", "B", "Answer"),
            template=data.draw(st.sampled_from(["Card 1", "Card 2"])),
            question="Q",
            choices=("A", "B"),
            answer="Answer",
            answer_format=data.draw(st.sampled_from(["bits", "numbers"])),
        )
        other = dataclasses.replace(package, kept=kept)
        assert package_key(dataclasses.replace(other, kept=dataclasses.replace(kept))) == (
            package_key(other)
        )
    else:
        other = dataclasses.replace(package, **{deck_field: data.draw(st.integers(0, 9))})
    assert (package_key(other) == package_key(package)) == (other == package)


_SEAL_TEXT = st.text(max_size=12)


@given(
    st.lists(_SEAL_TEXT, min_size=2, max_size=4),
    _SEAL_TEXT,
    st.sampled_from(["question", "explanation", "shuffle", "answer", "choices", "line_offsets"]),
)
def test_an_item_seal_follows_its_values_not_its_objects(
    choices: list[str], text: str, changed: str
) -> None:
    """An item loaded from a cache entry is reused only if its seal is the one it was read
    with: equal values give one seal however their strings are shared or interned, and a
    value of another type or content (1 for True, one more choice) gives another."""
    import sys
    from dataclasses import replace

    from ankigen.bank.fastread import item_seal
    from ankigen.bank.model import Item

    def fresh(value: str) -> str:
        return "".join(list(value))  # a new object, never interned

    item = Item(
        id="q",
        question=sys.intern(text),
        choices=tuple(choices),
        answer=(1,),
        explanation=text,  # the very object of `question`
        line=3,
        line_offsets=(0, 1),
        chunk=7,
    )
    copy = replace(
        item,
        question=fresh(text),
        choices=tuple(map(fresh, choices)),
        explanation=fresh(text),
        line_offsets=(0, 1),
    )
    assert item_seal(copy) == item_seal(item)
    other = {
        "question": text + "?",
        "explanation": text + " ",
        "shuffle": 1,
        "answer": (True,),
        "choices": (*choices, ""),
        "line_offsets": (0, 2),
    }[changed]
    assert item_seal(replace(item, **{changed: other})) != item_seal(item)


def _parity_row_by_row(rows: object) -> object:
    """What a cache entry's parity is, row by row: the rule `load_parity` checks by column."""
    if type(rows) is not list:
        return "bad"
    parity = {}
    for row in rows:
        if not (
            type(row) is list
            and len(row) == 6
            and type(row[0]) is str
            and type(row[1]) is int
            and type(row[2]) is tuple
            and all(type(number) is int for number in row[2])
            and all(type(value) is int for value in row[3:])
        ):
            return "bad"
        parity[row[0]] = (row[1], row[2], row[3], row[4], row[5])
    return parity


_PARITY_VALUE = (
    st.integers(-2, 2)
    | st.booleans()
    | st.text(max_size=2)
    | st.none()
    | st.floats(allow_nan=False)
)
_GOOD_ROW = st.tuples(
    st.text(max_size=2),
    st.integers(0, 3),
    st.lists(st.integers(1, 3), max_size=3).map(tuple),
    st.integers(),
    st.integers(),
    st.integers(),
).map(list)


@st.composite
def _parity_rows(draw: st.DrawFn) -> object:
    """Rows as ankigen writes them, and maybe one value (or one answer) of another type,
    or a row of another length."""
    rows: list[Any] = draw(st.lists(_GOOD_ROW, max_size=4))
    if rows and draw(st.booleans()):
        row = draw(st.sampled_from(rows))
        at = draw(st.integers(0, 6))
        if at == 6:
            row.append(0) if draw(st.booleans()) else row.pop()
        elif at == 2 and row[2] and draw(st.booleans()):
            row[2] = (draw(_PARITY_VALUE), *row[2][1:])
        else:
            row[at] = draw(_PARITY_VALUE)
    return rows


@SETTINGS
@given(_parity_rows() | _PARITY_VALUE | st.lists(_PARITY_VALUE, max_size=2))
def test_a_parity_is_read_by_column_as_it_was_row_by_row(rows: object) -> None:
    from ankigen.checks.cache_entry import BadEntry, load_parity

    source = _source("/nowhere")
    raw = _entry_of(source, {}, [], rows)
    expected = _parity_row_by_row(rows)
    try:
        found: object = load_parity(source, raw, ("en",))  # type: ignore[arg-type]
    except BadEntry:
        found = "bad"
    if rows is None:
        expected = None  # an entry keeps no parity
    assert found == expected


@SETTINGS
@given(
    st.lists(
        st.tuples(st.booleans(), st.booleans(), st.lists(IDS, max_size=2, unique=True)),
        max_size=4,
    )
)
def test_an_outline_travels_by_column_as_it_is(items: list[tuple[bool, bool, list[str]]]) -> None:
    """A checked bank's outline goes back from its worker a column at a time: the same
    outline, images, former ids and retired flags included, none or many items."""
    from ankigen.bank.model import Bank, ItemOutline, Outline

    bank = Bank(path="x.yaml", topic="demo", language="en", title="T", items=())
    rows = tuple(
        ItemOutline(
            f"i{n}",
            tuple(f"old-{f}" for f in former),
            retired,
            (("image", f"p{n}.png", n + 3),) if pictured else (),
        )
        for n, (retired, pictured, former) in enumerate(items)
    )
    outlined = Outline(bank, rows)
    sent = pickle.loads(pickle.dumps(outlined))
    assert sent == outlined
    assert [type(item) for item in sent.items] == [ItemOutline] * len(rows)


UNSAFE_MACROS = ["href", "style", "class", "cssId", "unicode", "require", "data", "html"]


@SETTINGS
@given(
    st.sampled_from(UNSAFE_MACROS),
    st.lists(st.booleans(), min_size=8, max_size=8),
    st.text(alphabet=" \t\n", max_size=3),
    st.text(alphabet="abc{}+^_ ", max_size=10),
    st.sampled_from([("\\(", "\\)"), ("\\[", "\\]")]),
)
def test_an_unsafe_mathjax_macro_is_found_whatever_its_case_or_spacing(
    name: str, upper: list[bool], space: str, around: str, delimiters: tuple[str, str]
) -> None:
    from ankigen.text.markup import problems

    cased = "".join(c.upper() if u else c for c, u in zip(name, upper * 2, strict=False))
    text = f"{delimiters[0]}{around}\\{space}{cased}{{x}}{{y}}{around}{delimiters[1]}"
    found = [p for p in problems(text) if "is not allowed" in p.message]
    assert found and all(p.severity == "error" for p in found), text


@SETTINGS
@given(
    st.lists(
        st.sampled_from(["frac", "displaystyle", "textstyle", "mathrm", "sqrt", "sum", "alpha"]),
        max_size=5,
    )
)
def test_the_usual_macros_are_never_taken_for_unsafe_ones(names: list[str]) -> None:
    from ankigen.text.markup import problems

    text = "\\(" + " ".join(f"\\{name}{{x}}" for name in names) + "\\)"
    assert not [p for p in problems(text) if "is not allowed" in p.message]


@SETTINGS
@given(
    st.lists(
        st.sampled_from([*"{}:!>.[]0 ab", "title", "topic", "language", "topic_title", "::"]),
        max_size=20,
    ).map("".join)
)
def test_a_deck_template_is_refused_with_a_reason_or_rendered_exactly(template: str) -> None:
    """Never str.format's behaviour: no exception, no conversion, no padding."""
    from ankigen.bank.model import Bank
    from ankigen.bank.project import Project, _template_problem

    problem = _template_problem(template)
    if problem is not None:
        assert problem.startswith("deck template")
        return
    bank = Bank(path="b.yaml", topic="t", language="en", title="T", items=())
    name = Project(path="p", deck=template).deck_name(bank)
    expected = (
        template.replace("{{", "\0")
        .replace("}}", "\1")
        .replace("{title}", "T")
        .replace("{topic}", "t")
        .replace("{language}", "en")
        .replace("{topic_title}", "t")
        .replace("\0", "{")
        .replace("\1", "}")
    )
    assert name == expected


JSON_REPLY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@SETTINGS
@given(
    st.integers(100, 599),
    JSON_REPLY.map(lambda v: json.dumps(v).encode())
    | st.fixed_dictionaries({"result": JSON_REPLY, "error": JSON_REPLY}).map(
        lambda v: json.dumps(v).encode()
    )
    | st.binary(max_size=40),
)
def test_any_reply_to_push_is_taken_or_refused_with_a_message(status: int, body: bytes) -> None:
    """Whatever answers at the URL, push checks the version and imports, or says what is
    wrong: never an internal error."""

    from ankigen.ankiconnect import AnkiConnect, AnkiConnectError

    class Answering(AnkiConnect):
        def _post(self, body_sent: bytes, timeout: float) -> tuple[int, str, bytes]:
            return status, "Reason", body

    client = Answering()
    for ask in (client.version, lambda: client.import_package(Path("x.apkg"))):
        try:
            ask()
        except AnkiConnectError as error:
            assert str(error)


@SETTINGS
@given(st.text(alphabet=st.sampled_from(list("ab \t\n\r\x0b\x0c\u00a0>;#é")), max_size=40))
def test_html_without_tags_or_entities_takes_the_short_way_to_the_same_text(text: str) -> None:
    from ankigen.formats.htmltext import html_to_text, reduced

    assert html_to_text(text) == reduced(text)
