"""`ankigen translate` (new and --update) and PO files for translation platforms."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import polib
from click.testing import CliRunner

from ankigen.bank.reader import load_bank
from tests.helpers import REPO, AnkiCollection, invoke, item, write_bank
from tests.support.adopt import GENANKI_KEPT

REFERENCE_ITEMS = [
    item("first", 2, question="Which collective gathers the shards of every rank?"),
    item("multi", [1, 3], choices=5, tags=["hard"]),
    item("fixed", 4, shuffle=False, image="x.png", image_alt="A ring of GPUs"),
    item("last", 1, explanation='Quotes " and \\ and <b>bold</b>\nand a second line.'),
]


def reference(project: Path) -> Path:
    return write_bank(
        project / "banks", language="en", items=REFERENCE_ITEMS, tags=["t"], level="easy"
    )


def test_translate_starts_a_bank_that_builds_and_counts_as_untranslated(
    project: Path, runner: CliRunner
) -> None:
    reference(project)
    result = invoke(runner, "translate", "demo", "--to", "yo")
    assert result.exit_code == 0, result.output
    assert (
        result.output == "wrote banks/demo/yo.yaml: 4 items to translate from banks/demo/en.yaml\n"
    )
    ref, _ = load_bank(project / "banks" / "demo" / "en.yaml")
    new, problems = load_bank(project / "banks" / "demo" / "yo.yaml")
    assert ref and new and problems == []
    assert new.language == "yo" and new.tags == ref.tags and new.level == ref.level
    strip = [("id", "question", "choices", "answer", "explanation", "tags", "shuffle", "image")]
    for a, b in zip(ref.items, new.items, strict=True):
        assert [getattr(a, k) for k in strip[0]] == [getattr(b, k) for k in strip[0]]
        assert a.image_alt == b.image_alt
    status = invoke(runner, "status").output.splitlines()
    assert status[-1].split() == ["demo", "yo", "4", "0", "4", "0", "0"]
    from PIL import Image

    (project / "media").mkdir()
    Image.new("RGB", (8, 8)).save(project / "media" / "x.png")
    assert invoke(runner, "build").exit_code == 0
    # never overwritten
    again = invoke(runner, "translate", "demo", "--to", "yo")
    assert again.exit_code == 1
    assert "banks/demo/yo.yaml exists: --update adds the items it lacks" in again.output


def test_update_adds_only_the_missing_items_in_order(project: Path, runner: CliRunner) -> None:
    reference(project)
    target = project / "banks" / "demo" / "yo.yaml"
    original = (
        "# kept as written\n"
        "topic: demo\n"
        "language: yo\n"
        "title: 'Àdánwò'\n"
        "items:\n"
        "    - id: multi   # my comment\n"
        "      question: Èwo ni?\n"
        "      choices: [Ọ̀kan, Èjì, Ẹ̀ta, Ẹ̀rin, Àrún]\n"
        "      answer: [1, 3]\n"
        "      explanation: Nítorí.\n"
        "\n"
        "# trailing comment\n"
    )
    target.write_text(original, encoding="utf-8")
    result = invoke(runner, "translate", "demo", "--to", "yo", "--update")
    assert result.exit_code == 0, result.output
    assert result.output == "wrote banks/demo/yo.yaml: 3 items added from banks/demo/en.yaml\n"
    text = target.read_text(encoding="utf-8")
    bank, problems = load_bank(target)
    assert bank is not None and problems == []
    assert [i.id for i in bank.items] == ["first", "multi", "fixed", "last"]
    assert bank.items[1].question == "Èwo ni?"
    # nothing else changed: without the added lines the file is the original
    added = {line for line in text.splitlines(keepends=True) if line not in original}
    assert "".join(line for line in text.splitlines(keepends=True) if line not in added) == original
    assert "    - id: first\n" in text  # the file's own indentation
    assert invoke(runner, "translate", "demo", "--to", "yo", "--update").output == (
        "banks/demo/yo.yaml: nothing to add\n"
    )


def test_po_round_trip_loses_nothing(project: Path, runner: CliRunner) -> None:
    banks = project / "banks"
    shutil.rmtree(banks)
    shutil.copytree(REPO / "banks", banks)
    for topic, language in (("fsdp", "yo"), ("zero", "wo"), ("data-parallel", "ur")):
        path = banks / topic / f"{language}.yaml"
        before = path.read_bytes()
        po_path = project / f"{language}.po"
        result = invoke(runner, "translate", topic, "--to", language, "--po", str(po_path))
        assert result.exit_code == 0, result.output
        po = polib.pofile(str(po_path))
        assert po.metadata["Language"] == language
        assert po.find("sharded-state|question", by="msgctxt") is None or topic == "fsdp"
        imported = invoke(runner, "import", str(po_path), "--from", "po")
        assert imported.exit_code == 0, imported.output
        assert path.read_bytes() == before


def test_po_entries_and_translations_written_back(project: Path, runner: CliRunner) -> None:
    reference(project)
    invoke(runner, "translate", "demo", "--to", "yo")
    po_path = project / "yo.po"
    assert invoke(runner, "translate", "demo", "--to", "yo", "--po", str(po_path)).output == (
        f"wrote {po_path}: 28 texts, 0 translated\n"
    )
    po = polib.pofile(str(po_path))
    contexts = [e.msgctxt for e in po]
    assert contexts[:3] == ["|title", "|level", "first|question"]
    assert "fixed|image_alt" in contexts and "multi|choice 5" in contexts
    assert po.find("first|choice 2", by="msgctxt").comment.splitlines()[0] == "the correct choice"
    last = po.find("last|explanation", by="msgctxt")
    assert last.msgid == 'Quotes " and \\ and <b>bold</b>\nand a second line.'
    translations = {
        "first|question": 'Èwo ni "collective" tí ó ń kó\nàwọn ègé jọ?',
        "multi|choice 5": "Àrún",
        "|title": "Àdánwò",
        "fixed|image_alt": "Òrùka àwọn GPU",
    }
    for context, text in translations.items():
        po.find(context, by="msgctxt").msgstr = text
    po.find("last|question", by="msgctxt").msgstr = "Fuzzy, skipped"
    po.find("last|question", by="msgctxt").flags.append("fuzzy")
    po.save(str(po_path))
    before = (project / "banks" / "demo" / "yo.yaml").read_text(encoding="utf-8")
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.output == (
        f"wrote banks/demo/yo.yaml: 4 translations from {po_path}; 1 fuzzy translation not "
        "imported (marked to check: clear the mark, Poedit's 'Needs work', once checked)\n"
    )
    bank, problems = load_bank(project / "banks" / "demo" / "yo.yaml")
    assert bank is not None and problems == []
    assert bank.title == "Àdánwò" and bank.items[0].question == translations["first|question"]
    assert bank.items[1].choices[4] == "Àrún" and bank.items[2].image_alt == "Òrùka àwọn GPU"
    assert bank.items[3].question == REFERENCE_ITEMS[3]["question"]
    after = (project / "banks" / "demo" / "yo.yaml").read_text(encoding="utf-8")
    diff = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    assert len([line for line in diff if line.startswith("- ")]) == 4  # nothing else moved
    # a translation of two lines is a block of two lines, as an author writes one
    assert '    question: |\n      Èwo ni "collective" tí ó ń kó\n      àwọn ègé jọ?\n' in after
    # exported again, the translations come back as they went in
    invoke(runner, "translate", "demo", "--to", "yo", "--po", str(po_path))
    again = polib.pofile(str(po_path))
    assert {c: again.find(c, by="msgctxt").msgstr for c in translations} == translations


def test_po_problems_are_reported(project: Path, runner: CliRunner) -> None:
    reference(project)
    po_path = project / "yo.po"
    invoke(runner, "translate", "demo", "--to", "yo", "--po", str(po_path))
    po = polib.pofile(str(po_path))
    po.append(polib.POEntry(msgctxt="gone|question", msgid="Old?", msgstr="Àtijọ́?"))
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0
    line = po_path.read_text(encoding="utf-8").splitlines().index('msgctxt "gone|question"') + 1
    assert f"{po_path}:{line}: warning: 'gone|question' is not a text of banks/demo/en.yaml" in (
        result.output
    )
    (project / "bad.po").write_text('msgid "x"\nmsgstr\n', encoding="utf-8")
    bad = invoke(runner, "import", str(project / "bad.po"), "--from", "po")
    assert bad.exit_code == 1 and "not a readable PO file" in bad.output
    # a .po file is a PO file without --from too; read as a quiz file it needs a topic
    assert invoke(runner, "import", str(po_path)).exit_code == 0
    page = invoke(runner, "import", str(po_path), "--from", "page")
    assert page.exit_code == 2 and "--topic and --lang are required" in page.output


def test_a_broken_bank_of_the_topic_stops_it(project: Path, runner: CliRunner) -> None:
    reference(project)
    write_bank(project / "banks", language="bn")
    (project / "banks" / "demo" / "en.yaml").write_text("topic: demo\nitems: [\n", encoding="utf-8")
    result = invoke(runner, "translate", "demo", "--to", "yo")
    assert result.exit_code == 1
    assert result.output.startswith("banks/demo/en.yaml:3: error: YAML syntax")
    assert not (project / "banks" / "demo" / "yo.yaml").exists()
    unknown = invoke(runner, "translate", "nothing", "--to", "yo")
    assert unknown.exit_code == 1
    assert "no bank has the topic 'nothing'" in unknown.output


def test_a_reference_without_explanations_is_refused_plainly(
    project: Path, runner: CliRunner
) -> None:
    """An adopted deck whose note type has no explanation field has items without one;
    a translation is a deck of ankigen's own note type, whose cards show one. Said before
    anything is written, rather than as errors of a bank that was never written."""
    kept = {key: value for key, value in GENANKI_KEPT.items() if key != "explanation"}
    items = [{key: value for key, value in item(n, choices=2).items() if key != "explanation"}
             for n in ("q1", "q2")]  # fmt: skip
    write_bank(project / "banks", "exam", "en", items, anki_notetype=kept)
    assert invoke(runner, "lint").exit_code == 0
    for args in (("--to", "de"), ("--to", "de", "--po", "de.po")):
        result = invoke(runner, "translate", "exam", *args)
        assert result.exit_code == 1, result.output
        assert "2 item(s) have no explanation ('q1' first)" in result.output
        assert "Traceback" not in result.output
    assert sorted(p.name for p in (project / "banks" / "exam").iterdir()) == ["en.yaml"]
    assert not (project / "de.po").exists()


def test_an_item_the_reference_renamed_is_renamed_in_its_translation(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    """The reference renames an item, keeping `formerly: [old]` as updates.md says. Its
    translation's item takes the new id and `formerly` too, through `translate --update`
    or a PO import: before, both added the item beside the old one, which then held an id
    the reference lists in `formerly`, and every build failed. The translation's learners'
    notes update in Anki, no duplicate; the PO file's entries follow the new id."""
    from PIL import Image

    reference(project)
    (project / "media").mkdir()
    Image.new("RGB", (8, 8)).save(project / "media" / "x.png")
    assert invoke(runner, "translate", "demo", "--to", "de").exit_code == 0
    de = project / "banks" / "demo" / "de.yaml"
    de.write_text(de.read_text(encoding="utf-8").replace("Which collective", "Welche"), "utf-8")
    po_path = project / "de.po"
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path)).exit_code == 0
    assert invoke(runner, "build").exit_code == 0
    assert collection.import_package(project / "out" / "demo.de.apkg").new == 4
    en = project / "banks" / "demo" / "en.yaml"
    renamed = en.read_text(encoding="utf-8").replace(
        "- id: first\n", "- id: gather\n  formerly: [first]\n"
    )
    en.write_text(renamed, encoding="utf-8")
    original = de.read_text(encoding="utf-8")

    updated = invoke(runner, "translate", "demo", "--to", "de", "--update")
    assert updated.exit_code == 0, updated.output
    assert "renamed 'first' to 'gather', as the reference did" in updated.output
    text = de.read_text(encoding="utf-8")
    assert "- id: gather\n    formerly: [first]\n" in text and "id: first" not in text
    built = invoke(runner, "build")
    assert built.exit_code == 0, built.output
    log = collection.import_package(project / "out" / "demo.de.apkg")
    assert (log.new, log.updated) == (0, 1)
    assert collection.note_by_item("gather")["Question"].startswith("Welche")

    de.write_text(original, encoding="utf-8")  # the same through a PO file
    merged = invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path))
    assert merged.exit_code == 0, merged.output
    po = polib.pofile(str(po_path))
    assert not po.obsolete_entries()
    entry = po.find("gather|question", by="msgctxt")
    assert entry is not None and entry.msgstr.startswith("Welche")
    entry.msgstr = "Welche Operation sammelt die Shards?"
    po.save(str(po_path))
    imported = invoke(runner, "import", str(po_path), "--from", "po")
    assert imported.exit_code == 0 and "warning" not in imported.output, imported.output
    bank, _ = load_bank(de)
    assert bank is not None and bank.items[0].id == "gather"
    assert (bank.items[0].formerly, bank.items[0].question) == (
        ("first",),
        "Welche Operation sammelt die Shards?",
    )
    assert invoke(runner, "build").exit_code == 0
