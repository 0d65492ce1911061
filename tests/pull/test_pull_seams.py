"""`ankigen pull` at its seams: a bank edited and rebuilt while a fix waited in Anki, two
notes under one GUID, multi-line texts, and notes of other note types in the decks. Each
through the real Anki backend: built, imported, edited there, exported, pulled."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ankigen.bank.reader import parse_bank
from ankigen.bank.texts import item_contexts, replace_texts
from tests.helpers import AnkiCollection, edit, export, invoke
from tests.support.pull import BANK


@pytest.fixture
def built(imported: AnkiCollection) -> AnkiCollection:
    """The bank built and imported: the collection holds the first build."""
    return imported


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


# ---- a text Anki never touched is not Anki's, whatever the bank did since


def test_a_fix_in_anki_and_another_text_edited_in_the_bank_and_rebuilt(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    """The learner fixes the explanation in Anki; meanwhile the author edits the question
    of the same item and builds again, so OUT holds only the new build. The explanation
    comes from Anki, the question stays the bank's: no conflict, and `--take anki`
    writes no text Anki did not change."""
    edit(built, "two", Explanation="The world size, as torch.distributed names it.")
    package = export(built, project / "edited.apkg")
    rebuild(runner, project, "on eight ranks?", "on eight GPUs?")

    dry = invoke(runner, "pull", str(package), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "error:" not in dry.stderr
    assert "would pull 1 text into banks/demo/en.yaml (two)" in dry.stdout

    for take in ((), ("--take", "anki")):
        bank_path(project).write_text(
            BANK.replace("on eight ranks?", "on eight GPUs?"), encoding="utf-8"
        )
        done = invoke(runner, "pull", str(package), *take)
        assert done.exit_code == 0, done.output
        assert "error:" not in done.stderr, done.stderr
        two = item(project, "two")
        assert two["explanation"] == "The world size, as torch.distributed names it."
        assert two["question"] == "What is \\(n\\) on eight GPUs?"  # the bank's, newer


def test_a_learner_on_an_older_build_with_the_packages_gone(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    """Anki holds the first build; the bank was edited and built twice since, and OUT
    holds no package of the first build (or none at all). The text Anki has for the
    question and the choices is what the first build issued: not an edit, not a conflict.
    Only the why the learner changed comes back."""
    one = built.note_by_item("one")
    edit(built, "one", Choices=one["Choices"].replace("It sums and gives", "It sums, then gives"))
    package = export(built, project / "edited.apkg")
    rebuild(runner, project, "Which collective sums", "Which collective adds")
    rebuild(runner, project, "- scatter", "- reduce-scatter")
    (project / "out" / "demo.en.apkg").unlink()

    done = invoke(runner, "pull", str(package))
    assert done.exit_code == 0, done.output
    assert "error:" not in done.stderr, done.stderr
    assert "pulled 1 text into banks/demo/en.yaml (one)" in done.stdout
    one_now = item(project, "one")
    assert one_now["why 1"] == "It sums, then gives the result to every rank."
    assert one_now["question"] == "Which collective adds across ranks?"
    assert one_now["choice 3"] == "reduce-scatter"


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def test_a_text_changed_on_both_sides_is_the_only_conflict(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    """Anki and the bank both changed the explanation, and the bank the question too,
    then built again. What the first build issued is found in the banks' git history
    (the build's package is gone): the explanation is the one conflict, and
    `--take anki` takes it without putting the older question back."""
    (project / ".gitignore").write_text("out/\n", encoding="utf-8")
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "first build")
    edit(built, "two", Explanation="Fixed in Anki.")
    package = export(built, project / "edited.apkg")
    bank = bank_path(project)
    rebuild(runner, project, "on eight ranks?", "on eight GPUs?")
    changed = rebuild(runner, project, "The world size.", "Fixed in the bank.")
    git(project, "commit", "-q", "-am", "second build")

    result = invoke(runner, "pull", str(package))
    assert result.exit_code == 1
    assert result.stderr.count("error:") == 1, result.stderr
    assert "item 'two': explanation changed in Anki and in the bank" in result.stderr
    assert bank.read_text(encoding="utf-8") == changed

    taken = invoke(runner, "pull", str(package), "--take", "anki")
    assert taken.exit_code == 0, taken.output
    two = item(project, "two")
    assert two["explanation"] == "Fixed in Anki."
    assert two["question"] == "What is \\(n\\) on eight GPUs?"


# ---- two notes under one GUID


def twin(collection: AnkiCollection, item_id: str, deck: str, **fields: str) -> int:
    """A second note with the GUID of the item's note, as a hand-made or broken
    collection can hold: Anki's importer keeps one note per GUID, so it is written
    into the database directly."""
    note = collection.note_by_item(item_id)
    other = collection.col.new_note(collection.col.models.get(note.mid))
    for name, value in note.items():
        other[name] = fields.get(name, value)
    other.tags = list(note.tags)
    collection.col.add_note(other, collection.col.decks.id(deck))
    collection.col.db.execute("update notes set guid = ? where id = ?", note.guid, other.id)
    return int(other.id)


def test_two_notes_with_one_guid_are_reported_and_not_pulled(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    first = built.note_by_item("two")
    edit(built, "two", Explanation="The first note's fix.")
    second = twin(built, "two", "Elsewhere", Explanation="The second note's fix.")
    package = export(built, project / "twins.apkg")

    result = invoke(runner, "pull", str(package))
    assert result.exit_code == 0, result.output
    assert (
        f"banks/demo/en.yaml:19: warning: item 'two': 2 notes have its GUID {first.guid!r}"
        in result.stderr
    ), result.stderr
    assert f"note {first.id} in 'demo quiz (en)'" in result.stderr
    assert f"note {second} in 'Elsewhere'" in result.stderr
    assert "neither is pulled" in result.stderr
    assert bank_path(project).read_text(encoding="utf-8") == BANK


def test_two_notes_with_one_guid_and_the_same_fields_are_pulled_once(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    edit(built, "two", Explanation="One fix, twice.")
    twin(built, "two", "Elsewhere")
    package = export(built, project / "twins.apkg")
    result = invoke(runner, "pull", str(package))
    assert result.exit_code == 0, result.output
    assert "2 notes have its GUID" in result.stderr
    assert "same fields: pulled as one" in result.stderr
    assert "pulled 1 text into banks/demo/en.yaml (two)" in result.stdout
    assert item(project, "two")["explanation"] == "One fix, twice."


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
    if not text:
        return  # an empty text is no text to write
    # the YAML holds exactly the text (as the reader strips it), and nothing else moved
    data = yaml.safe_load(out)["items"][0]
    if where == "question":
        held = data["question"]
    else:
        choice = data["choices"][int(context.rpartition(" ")[2]) - 1]
        held = choice if isinstance(choice, str) else choice["text" if where == "choice" else "why"]
    assert str(held).strip() == text, out
    assert data["answer"] == 1 and out.count("# comment-a") == out.count("# comment-c") == 1
    bank, _ = parse_bank("en.yaml", out.encode("utf-8"))
    if bank is not None:  # the reader refuses some texts (a control character, `\[` alone)
        assert item_contexts(bank.items[0])[context] == text, out
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


# ---- notes of another note type in the decks


def test_a_note_of_another_type_in_the_decks_is_listed(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    basic = built.col.models.by_name("Basic")
    assert basic is not None
    note = built.col.new_note(basic)
    note["Front"] = "<b>What</b> does NCCL stand for, and who ships it with CUDA?"
    note["Back"] = "NVIDIA Collective Communications Library."
    built.col.add_note(note, built.col.decks.id("demo quiz (en)"))
    away = built.col.new_note(basic)
    away["Front"] = "A note of another deck"
    built.col.add_note(away, built.col.decks.id("Elsewhere"))
    built.col.export_collection_package(str(project / "all.colpkg"), False, False)

    result = invoke(runner, "pull", "all.colpkg")
    assert result.exit_code == 0, result.output
    assert "1 note of another note type in these decks (not pulled):" in result.stderr
    assert (
        f"{note.guid}  demo quiz (en)  Basic  'What does NCCL stand for, and who" in result.stderr
    )
    assert "another deck" not in result.stderr  # notes outside the banks' decks are not ours
