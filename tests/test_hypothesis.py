"""Property tests: the loaders never crash, and text survives every transformation."""

from __future__ import annotations

from html.parser import HTMLParser

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ankigen import identity
from ankigen.bank import parse_bank
from ankigen.errors import Diagnostic
from ankigen.html import INLINE_TAGS, inline_html, plain_text
from ankigen.quiztext import PageError, decode_page, parse_page, yaml_string

VALID_BANK = """\
topic: demo
language: en
title: "Demo"
items:
  - id: one
    question: "What is 1 + 1?"
    choices: ["1", "2", "3"]
    answer: 2
    explanation: "Arithmetic."
  - id: two
    question: "Pick both"
    choices: [a, b]
    answer: [1, 2]
    explanation: ok
"""

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


def mutate(text: str, edits: list[tuple[int, int, str]]) -> str:
    for position, kind, fragment in edits:
        at = position % (len(text) + 1)
        if kind == 0:
            text = text[:at] + fragment + text[at:]
        elif kind == 1:
            text = text[:at] + text[at + len(fragment) + 1 :]
        else:
            text = text[:at] + fragment + text[at + len(fragment) :]
    return text


EDITS = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.integers(0, 2),
        st.text(
            alphabet=st.sampled_from(list(" \n:-[]{}&*!|>'\"#?,0123456789abc\t\x00é؟")), max_size=6
        ),
    ),
    max_size=6,
)


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
        assert all(2 <= len(item.choices) <= 8 for item in page.items)
        for item in page.items:
            assert item.question == item.question.strip()


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
def test_text_without_tags_survives_as_text(text: str) -> None:
    assert plain_text(text) == text.strip() or plain_text(text) == text


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
    assert identity.note_guid(*a) == identity.note_guid(*a)
    if a != b:
        assert identity.note_guid(*a) != identity.note_guid(*b)


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
    from ankigen.yamltree import compose_file, scalar_type

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
BANK_KEYS = st.sampled_from(["bank", "diagnostics", "items", "choices", "answer", "question"])


def _source(tmp: str) -> object:
    import hashlib
    from pathlib import Path

    from ankigen.sources import Source

    data = VALID_BANK.encode()
    return Source(Path(tmp) / "x.yaml", data, hashlib.sha256(data).hexdigest())


@SETTINGS
@given(st.binary(max_size=600))
def test_bank_cache_entries_of_random_bytes_are_refused(raw: bytes) -> None:
    import contextlib

    from ankigen.bankcache import BadEntry, load

    # anything but BadEntry (a crash) fails the test; random bytes are never an entry
    with contextlib.suppress(BadEntry):
        load(_source("/nowhere"), raw)  # type: ignore[arg-type]
        raise AssertionError("random bytes were taken for a cache entry")


@SETTINGS
@given(
    st.dictionaries(BANK_KEYS, JSON, max_size=3)
    | st.fixed_dictionaries({"bank": st.dictionaries(BANK_KEYS, JSON), "diagnostics": JSON}),
)
def test_bank_cache_entries_of_random_json_are_refused_or_well_formed(payload: object) -> None:
    """Even with a header that matches, only a payload of exactly the right shape is used."""
    import hashlib
    import json
    import zlib

    from ankigen import __version__
    from ankigen.bank import Bank
    from ankigen.bankcache import FORMAT, BadEntry, load

    source = _source("/nowhere")
    body = zlib.compress(json.dumps(payload).encode())
    header = {
        "version": __version__,
        "format": FORMAT,
        "digest": source.digest,  # type: ignore[attr-defined]
        "path": str(source.path),  # type: ignore[attr-defined]
        "checksum": hashlib.sha256(body).hexdigest(),
    }
    try:
        bank, problems = load(source, json.dumps(header).encode() + b"\n" + body)  # type: ignore[arg-type]
    except BadEntry:
        return
    assert bank is None or isinstance(bank, Bank)
    assert all(isinstance(p, Diagnostic) for p in problems)


@SETTINGS
@given(JSON)
def test_build_and_issued_caches_of_any_json_never_crash(content: object) -> None:
    import json
    import tempfile
    from pathlib import Path

    from ankigen.build import CACHE_NAME, BuildCache
    from ankigen.identity import ISSUED_NAME, Issued

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        (out / CACHE_NAME).write_text(json.dumps({"version": "x", "last": content}))
        (out / ISSUED_NAME).write_text(json.dumps({"version": 1, "notes": content, "blobs": []}))
        cache = BuildCache(out)
        assert cache.unchanged("fingerprint", out, out / "media") is None
        assert cache.key_if_fresh(out / "x.apkg") is None
        (out / CACHE_NAME).write_text(json.dumps(content))
        BuildCache(out).unchanged("fingerprint", out, out / "media")
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
    from pathlib import Path

    from ankigen.sources import NoBanks, find_banks

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

    from ankigen.markup import CODE_CLASS, problems, rich_html, segments

    html = rich_html(text)
    parser = Tags()
    parser.feed(html)
    assert parser.tags <= INLINE_TAGS | {"div", "pre", "span"}
    allowed = {CODE_CLASS, *STANDARD_TYPES.values()}
    assert all(name == "class" and value in allowed for name, value in parser.attributes)
    list(problems(text))  # never raises
    # every math delimiter outside code blocks reaches the card as written
    prose = "".join(s.text for s in segments(text) if s.language is None)
    for delimiter in ("\\(", "\\)", "\\[", "\\]"):
        assert html.count(delimiter) >= prose.count(delimiter)
