"""`ankigen pull` at its seams: a bank edited and rebuilt while a fix waited in Anki, two
notes under one GUID, multi-line texts, and notes of other note types in the decks. Each
through the real Anki backend: built, imported, edited there, exported, pulled."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ankigen.bank.reader import parse_bank
from ankigen.bank.values import uncarried
from ankigen.formats.banktexts import item_contexts, replace_texts
from tests.conftest import invoke
from tests.helpers import AnkiCollection
from tests.test_pull import BANK, edit, export


@pytest.fixture
def built(project: Path, runner: CliRunner, collection: AnkiCollection) -> AnkiCollection:
    """The bank built and imported: the collection holds the first build."""
    (project / "banks" / "demo").mkdir()
    (project / "banks" / "demo" / "en.yaml").write_text(BANK, encoding="utf-8")
    assert invoke(runner, "build").exit_code == 0
    collection.import_package(project / "out" / "demo.en.apkg")
    return collection


def bank_path(project: Path) -> Path:
    return project / "banks" / "demo" / "en.yaml"


def rebuild(runner: CliRunner, project: Path, old: str, new: str) -> str:
    """The bank edited (`old` replaced by `new`) and built again; its text after."""
    path = bank_path(project)
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    return path.read_text(encoding="utf-8")


def item(project: Path, item_id: str) -> dict[str, str]:
    bank, problems = parse_bank("en.yaml", bank_path(project).read_bytes())
    assert bank is not None, problems
    found = next(i for i in bank.items if i.id == item_id)
    return {c.partition("|")[2]: t for c, t in item_contexts(found).items()}


# ---- multi-line texts keep their layout


def test_a_multi_line_text_comes_back_as_a_block_with_its_lines(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    one = built.note_by_item("one")
    edit(
        built,
        "one",
        Explanation=one["Explanation"].replace("Reduce-scatter, then", "A reduce-scatter, then an"),
        Question="Which collective sums across ranks?<br>(pick one)",
    )
    package = export(built, project / "edited.apkg")
    result = invoke(runner, "pull", str(package))
    assert result.exit_code == 0, result.output
    assert bank_path(project).read_text(encoding="utf-8") == BANK.replace(
        "    question: 'Which collective sums across ranks?'   # keep this comment\n",
        "    question: |   # keep this comment\n"
        "      Which collective sums across ranks?\n"
        "      (pick one)\n",
    ).replace(
        "      Reduce-scatter, then all-gather:", "      A reduce-scatter, then an all-gather:"
    )


_WHERE = {
    "question": "x|question",
    "choice": "x|choice 1",
    "why": "x|why 2",
    "new why": "x|why 3",
    "new why of a plain choice": "x|why 1",
}
_PIECES = st.sampled_from(
    ["#", " # not a comment", ": ", "- ", "|", ">", "'", '"', "\\", "\t", "  ", "{", "[",
     "&a", "*a", "!x", "%", "@", "`", "\u00a0", "\u2028", "\x85", "\r", "\ufeff", "é"]
)  # fmt: skip
_LINE = st.lists(
    st.one_of(_PIECES, st.text(st.characters(codec="utf-8"), max_size=6)), max_size=5
).map(lambda pieces: "".join(pieces).replace("\n", ""))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LINE, min_size=1, max_size=5), st.sampled_from(sorted(_WHERE)))
def test_any_text_replaced_in_place_reads_back_as_written(lines: list[str], where: str) -> None:
    """Whatever the text (control characters, tabs, a `#`, YAML's own indicators), the
    bank reads back exactly it, and a text of several lines is a block scalar."""
    text = "\n".join(lines).strip()
    source = (
        "topic: demo\nlanguage: en\ntitle: demo\nitems:\n"
        "  - id: x\n    question: 'Q?'  # a comment\n"
        "    choices:\n      - plain  # comment-a\n      - text: B\n        why: because\n"
        "      - text: C  # comment-c\n"
        "    answer: 1\n    explanation: E.\n"
    )
    context = _WHERE[where]
    out, _ = replace_texts(source, "en.yaml", {context: text})
    bank, problems = parse_bank("en.yaml", out.encode("utf-8"))
    if (bank is None and uncarried(text)) or not text:
        return  # texts the reader refuses, wherever they are written
    if bank is None:
        assert all("visually empty" in p.message for p in problems), (out, problems)
        return
    assert bank is not None, (out, problems)
    assert item_contexts(bank.items[0])[context] == text, out
    assert out.count("# comment-a") == out.count("# comment-c") == 1, out  # comments stay
    assert yaml.safe_load(out)["items"][0]["answer"] == 1  # nothing else moved
    if "\n" in text and all(c.isprintable() or c in "\n\t" for c in text):
        assert _style(out, where) == "|", out


def _style(text: str, where: str) -> str | None:
    """The YAML style of the text `where` names in the one item of `text`."""
    item = yaml.compose(text).value[-1][1].value[0]
    fields = {k.value: v for k, v in item.value}
    if where == "question":
        return str(fields["question"].style)
    number = int(_WHERE[where].rpartition(" ")[2])
    choice = fields["choices"].value[number - 1]
    if isinstance(choice, yaml.ScalarNode):
        return str(choice.style)
    keys = {k.value: v for k, v in choice.value}
    return str(keys["text" if where == "choice" else "why"].style)
