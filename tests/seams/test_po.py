"""Where a PO file meets a bank it was not made from: a new file named by `-o`, a bank of
another topic or language. Every command that changes a bank opens it through
`bank.edit`, which refuses a bank the change is not for."""

from __future__ import annotations

from pathlib import Path

import polib
import pytest
from click.testing import CliRunner

from ankigen.bank.reader import load_bank
from tests.helpers import invoke, item, write_bank

ITEMS = [item(name, 1 + n % 3) for n, name in enumerate(["ring", "tree", "mesh", "star"])]


def translated_project(project: Path, runner: CliRunner) -> Path:
    """demo/en, its translation demo/de with two texts translated in the bank, and the PO
    file made from it with two more translated there."""
    banks = project / "banks"
    write_bank(banks, items=ITEMS)
    write_bank(banks, topic="other", items=[item("alone")])
    assert invoke(runner, "translate", "demo", "--to", "de").exit_code == 0
    de = banks / "demo" / "de.yaml"
    text = de.read_text(encoding="utf-8")
    text = text.replace("Question ring?", "Frage Ring?").replace("Explanation: tree.", "Erklärt.")
    de.write_text(text, encoding="utf-8")
    po_path = project / "de.po"
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path)).exit_code == 0
    po = polib.pofile(str(po_path))
    po.find("mesh|question", by="msgctxt").msgstr = "Frage Netz?"
    po.find("star|choice 2", by="msgctxt").msgstr = "Stern Wahl 2"
    po.save(str(po_path))
    return po_path


def test_po_import_to_a_new_file_writes_every_translation(project: Path, runner: CliRunner) -> None:
    po_path = translated_project(project, runner)
    result = invoke(runner, "import", str(po_path), "--from", "po", "-o", "de-copy.yaml")
    assert result.exit_code == 0, result.output
    # the bank's own translations came with the PO file: a new file has no newer edit
    assert "warning" not in result.output
    assert result.output == f"wrote de-copy.yaml: 4 translations from {po_path}\n"
    bank, problems = load_bank(project / "de-copy.yaml")
    assert bank is not None and problems == []
    assert (bank.topic, bank.language) == ("demo", "de")
    questions = {i.id: i.question for i in bank.items}
    assert questions["ring"] == "Frage Ring?" and questions["mesh"] == "Frage Netz?"
    assert bank.items[1].explanation == "Erklärt." and bank.items[3].choices[1] == "Stern Wahl 2"


def test_po_import_into_an_existing_bank_still_keeps_a_newer_bank_edit(
    project: Path, runner: CliRunner
) -> None:
    po_path = translated_project(project, runner)
    de = project / "banks" / "demo" / "de.yaml"
    de.write_text(
        de.read_text(encoding="utf-8").replace("Frage Ring?", "Frage zum Ring?"), encoding="utf-8"
    )
    po = polib.pofile(str(po_path))
    po.find("ring|question", by="msgctxt").msgstr = "Ring, alt?"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0, result.output
    assert "'ring|question': the bank's text changed since this PO file was made" in result.output
    bank, _ = load_bank(de)
    assert bank is not None and bank.items[0].question == "Frage zum Ring?"
    assert bank.items[2].question == "Frage Netz?"


def test_po_import_into_another_topics_bank_is_refused(project: Path, runner: CliRunner) -> None:
    po_path = translated_project(project, runner)
    banks = project / "banks"
    files = {path: path.read_bytes() for path in banks.rglob("*.yaml")}
    for target, has in (
        (banks / "other" / "en.yaml", "'other' in 'en'"),
        (banks / "demo" / "en.yaml", "'demo' in 'en'"),
    ):
        result = invoke(runner, "import", str(po_path), "--from", "po", "-o", str(target))
        assert result.exit_code == 1, result.output
        assert result.output == (
            f"error: {target} is the bank of {has}, not of 'demo' in 'de' as {po_path} is; "
            "nothing was written: name the bank of 'demo' in 'de', or a new file\n"
        )
        assert "Traceback" not in result.output
    write_bank(banks, language="fr", items=ITEMS)
    files[banks / "demo" / "fr.yaml"] = (banks / "demo" / "fr.yaml").read_bytes()
    result = invoke(runner, "import", str(po_path), "-o", str(banks / "demo" / "fr.yaml"))
    assert result.exit_code == 1 and "is the bank of 'demo' in 'fr'" in result.output
    assert {path: path.read_bytes() for path in banks.rglob("*.yaml")} == files


def test_translate_update_refuses_a_bank_whose_header_names_another_language(
    project: Path, runner: CliRunner
) -> None:
    banks = project / "banks"
    write_bank(banks, items=ITEMS)
    misplaced = write_bank(banks, language="fr", items=ITEMS[:2])
    misplaced.rename(banks / "demo" / "de.yaml")
    before = (banks / "demo" / "de.yaml").read_bytes()
    result = invoke(runner, "translate", "demo", "--to", "de", "--update")
    assert result.exit_code == 1
    assert "banks/demo/de.yaml is the bank of 'demo' in 'fr', not of 'demo' in 'de'" in (
        result.output
    )
    assert (banks / "demo" / "de.yaml").read_bytes() == before
    po = invoke(runner, "translate", "demo", "--to", "de", "--po", "de.po")
    assert po.exit_code == 1 and "is the bank of 'demo' in 'fr'" in po.output
    assert not (project / "de.po").exists()


def test_po_import_to_standard_output_names_no_schema(project: Path, runner: CliRunner) -> None:
    """A bank on standard output gets no schema line (where it will be, and the schema
    from there, is not known): the PO import wrote one relative to the current folder."""
    po_path = translated_project(project, runner)
    result = invoke(runner, "import", str(po_path), "--from", "po", "-o", "-")
    assert result.exit_code == 0, result.output
    assert "yaml-language-server" not in result.stdout and "topic: demo\n" in result.stdout


def test_choices_the_reference_moved_are_not_written_into_other_places(
    project: Path, runner: CliRunner
) -> None:
    """The reference's choices reordered (its answer with them) and one added, after the
    translation was made: the PO entries translate the reference's choices at their new
    places, and written into the translation's, whose answer is still the old one, they
    made a wrong choice the right one and lost the added one, unsaid. Such an item's
    choices are left for the author, with a warning; its other texts come in."""
    po_path = translated_project(project, runner)
    assert invoke(runner, "import", str(po_path), "--from", "po").exit_code == 0
    moved = [
        item("ring", 2) | {"choices": ["ring choice 2", "ring choice 1", "ring choice 3"]},
        *ITEMS[1:3],
        item("star", 2, choices=5),
    ]
    write_bank(project / "banks", items=moved)
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path)).exit_code == 0
    po = polib.pofile(str(po_path))
    for entry in po:
        if not entry.obsolete:
            entry.flags = [flag for flag in entry.flags if flag != "fuzzy"]
            entry.msgstr = f"DE {entry.msgid}"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0, result.output
    for name, there, here in (("ring", "2 of 3", "1 of 4"), ("star", "2 of 5", "1 of 4")):
        assert (
            f"warning: item {name!r}: its choices were not imported: the reference's changed "
            f"since this translation was made (answer {there} there, {here} here)"
        ) in result.output
    bank, _ = load_bank(project / "banks" / "demo" / "de.yaml")
    assert bank is not None
    ring, star = bank.items[0], bank.items[3]
    assert ring.question == "DE Question ring?"  # what stays in place comes in
    assert (ring.answer, ring.choices[0]) == ((1,), "ring choice 1")
    assert (star.answer, len(star.choices), star.choices[1]) == ((1,), 4, "Stern Wahl 2")


def test_an_entry_without_its_digest_never_overwrites_a_bank_translation(
    project: Path, runner: CliRunner
) -> None:
    """A tool (or a hand) dropped the `#. bank text:` lines: whether the bank's translation
    is newer cannot be told, and the older PO text was written over the bank's fix
    unsaid. It is kept, with a warning; a text the bank has not translated comes in."""
    po_path = translated_project(project, runner)
    assert invoke(runner, "import", str(po_path), "--from", "po").exit_code == 0
    de = project / "banks" / "demo" / "de.yaml"
    de.write_text(de.read_text(encoding="utf-8").replace("Frage Netz?", "Frage zum Netz?"), "utf-8")
    po = polib.pofile(str(po_path))
    for entry in po:
        entry.comment = ""
    po.find("tree|question", by="msgctxt").msgstr = "Frage Baum?"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0, result.output
    assert (
        "'mesh|question': this entry has no '#. bank text:' line (a tool dropped it?), so "
        "whether the bank's translation is newer is not known; kept the bank's "
        "'Frage zum Netz?', not the PO file's 'Frage Netz?' (--force writes the PO file's)"
    ) in result.output
    bank, _ = load_bank(de)
    assert bank is not None
    assert [i.question for i in bank.items[1:3]] == ["Frage Baum?", "Frage zum Netz?"]


def test_force_writes_a_po_file_edited_again_after_its_import(
    project: Path, runner: CliRunner
) -> None:
    """A translator goes on editing a PO file already imported: the bank holds what the
    first import wrote, not what the file's digests recorded, and the import keeps it,
    saying so; `--force` takes the PO file's texts, the translator's newer work."""
    po_path = translated_project(project, runner)
    assert invoke(runner, "import", str(po_path), "--from", "po").exit_code == 0
    po = polib.pofile(str(po_path))
    po.find("mesh|question", by="msgctxt").msgstr = "Frage zum Netz?"
    po.save(str(po_path))
    kept = invoke(runner, "import", str(po_path), "--from", "po")
    assert "(--force writes the PO file's)" in kept.output
    forced = invoke(runner, "import", str(po_path), "--from", "po", "--force")
    assert forced.exit_code == 0 and "warning" not in forced.output, forced.output
    bank, _ = load_bank(project / "banks" / "demo" / "de.yaml")
    assert bank is not None and bank.items[2].question == "Frage zum Netz?"


def test_a_po_file_made_before_its_topic_was_renamed_still_comes_in(
    project: Path, runner: CliRunner
) -> None:
    """The topic renamed with `formerly: {topic: demo}` while a translator holds its PO
    file: the import failed ("no bank has the topic"), and `translate --po` refused to
    merge into a file of "another topic", offering only --force, which loses the
    translator's work. The file is the renamed topic's."""
    po_path = translated_project(project, runner)
    banks = project / "banks"
    (banks / "demo").rename(banks / "rings")
    for language in ("en", "de"):
        bank = banks / "rings" / f"{language}.yaml"
        text = bank.read_text(encoding="utf-8").replace("topic: demo\n", "topic: rings\n", 1)
        bank.write_text(text.replace("language:", "formerly: {topic: demo}\nlanguage:", 1), "utf-8")
    assert invoke(runner, "build").exit_code == 0
    imported = invoke(runner, "import", str(po_path), "--from", "po")
    assert imported.exit_code == 0, imported.output
    bank, _ = load_bank(banks / "rings" / "de.yaml")
    assert bank is not None and bank.items[2].question == "Frage Netz?"
    merged = invoke(runner, "translate", "rings", "--to", "de", "--po", str(po_path))
    assert merged.exit_code == 0, merged.output
    po = polib.pofile(str(po_path))
    assert po.metadata["X-Ankigen-Topic"] == "rings"
    assert po.find("mesh|question", by="msgctxt").msgstr == "Frage Netz?"


def test_a_po_file_in_the_charset_its_header_names_is_read_in_it(
    project: Path, runner: CliRunner
) -> None:
    """An older tool's ISO-8859-1 PO file, as its header says (`charset=ISO-8859-1`), as
    gettext reads it: it was refused as not UTF-8."""
    po_path = translated_project(project, runner)
    text = po_path.read_text(encoding="utf-8").replace("Frage Netz?", "Frage über Netze?")
    text = text.replace("charset=UTF-8", "charset=ISO-8859-1")
    po_path.write_bytes(text.encode("iso-8859-1"))
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0, result.output
    bank, _ = load_bank(project / "banks" / "demo" / "de.yaml")
    assert bank is not None and bank.items[2].question == "Frage über Netze?"


@pytest.mark.parametrize("line_break", [b"\r", b"\r\n"], ids=["old-mac", "windows"])
def test_a_bank_is_edited_in_its_own_line_breaks(
    project: Path, runner: CliRunner, line_break: bytes
) -> None:
    """Lone `\r` line breaks (classic Mac OS), which YAML, lint and build read: a PO
    import into such a bank called it a YAML syntax error at a line it does not have.
    Windows' `\r\n` (git's autocrlf): the lines an import inserted ended in `\n` alone,
    and the file had two kinds. Either is edited as any bank, and keeps its breaks."""
    po_path = translated_project(project, runner)
    de = project / "banks" / "demo" / "de.yaml"
    de.write_bytes(de.read_bytes().replace(b"\n", line_break))
    po = polib.pofile(str(po_path))
    po.find("mesh|question", by="msgctxt").msgstr = "Welches Netz\nverbindet alles?"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0, result.output
    data = de.read_bytes()
    assert data.count(line_break) > 10
    assert (
        data.replace(line_break, b"").count(b"\r")
        == data.replace(line_break, b"").count(b"\n")
        == 0
    )
    bank, problems = load_bank(de)
    assert bank is not None, problems
    assert bank.items[2].question == "Welches Netz\nverbindet alles?"


def test_a_bank_fix_after_an_import_comes_into_the_merged_po_file(
    project: Path, runner: CliRunner
) -> None:
    """After a PO import the German text is fixed in the bank (by hand, or pulled from
    Anki). The merge kept the file's old text and its old digest, so every later import
    of that entry was refused, the translator's improvements too. The merge now gives
    the bank's text, fuzzy, the file's kept in a comment; once the translator settles it,
    it is imported."""
    po_path = translated_project(project, runner)
    assert invoke(runner, "import", str(po_path), "--from", "po").exit_code == 0
    de = project / "banks" / "demo" / "de.yaml"
    de.write_text(de.read_text(encoding="utf-8").replace("Frage Netz?", "Frage zum Netz?"), "utf-8")
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path)).exit_code == 0
    entry = polib.pofile(str(po_path)).find("mesh|question", by="msgctxt")
    assert (entry.msgstr, entry.flags) == ("Frage zum Netz?", ["fuzzy"])
    assert "this file had: Frage Netz?" in entry.tcomment
    po = polib.pofile(str(po_path))
    settled = po.find("mesh|question", by="msgctxt")
    settled.msgstr, settled.flags, settled.tcomment = "Frage zu den Netzen?", [], ""
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0 and "warning" not in result.output, result.output
    bank, _ = load_bank(de)
    assert bank is not None and bank.items[2].question == "Frage zu den Netzen?"


def test_a_renamed_and_reordered_item_keeps_its_right_answer(
    project: Path, runner: CliRunner
) -> None:
    """The reference renames an item and reorders its choices: the alignment guard looked
    the translation's item up by its old id, found nothing, and let the choices in."""
    po_path = translated_project(project, runner)
    assert invoke(runner, "import", str(po_path), "--from", "po").exit_code == 0
    moved = item("ring2", 2, choices=4, formerly=["ring"])
    moved["choices"] = ["ring choice 2", "ring choice 1", "ring choice 3", "ring choice 4"]
    write_bank(project / "banks", items=[moved, *ITEMS[1:]])
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path)).exit_code == 0
    po = polib.pofile(str(po_path))
    for entry in po:
        if not entry.obsolete:
            entry.flags, entry.msgstr = [], f"DE {entry.msgid}"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0, result.output
    assert "item 'ring': its choices were not imported" in result.output
    bank, _ = load_bank(project / "banks" / "demo" / "de.yaml")
    assert bank is not None
    ring = bank.items[0]
    assert (ring.id, ring.answer, ring.choices[0]) == ("ring2", (1,), "ring choice 1")


def test_a_choice_the_reference_changed_since_is_not_written_into_a_new_bank(
    project: Path, runner: CliRunner
) -> None:
    """No bank yet, the reference's choices reordered after the PO file was made: the
    import wrote each translation at its old place, under the new answer."""
    po_path = translated_project(project, runner)
    (project / "banks" / "demo" / "de.yaml").unlink()
    moved = item("ring", 2, choices=4)
    moved["choices"] = ["ring choice 2", "ring choice 1", "ring choice 3", "ring choice 4"]
    write_bank(project / "banks", items=[moved, *ITEMS[1:]])
    po = polib.pofile(str(po_path))
    for entry in po:
        entry.msgstr = f"DE {entry.msgid}"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0, result.output
    assert "'ring|choice 1': the reference's choice there changed since" in result.output
    bank, _ = load_bank(project / "banks" / "demo" / "de.yaml")
    assert bank is not None
    assert bank.items[0].choices[:2] == ("ring choice 2", "ring choice 1")


def test_a_header_charset_that_lies_or_names_no_text_encoding(
    project: Path, runner: CliRunner
) -> None:
    """A UTF-8 file whose header says ISO-8859-1 was read as Latin-1 (mojibake written for
    good); `charset=rot13` or `base64` ended in an internal error."""
    po_path = translated_project(project, runner)
    text = po_path.read_text(encoding="utf-8").replace("Frage Netz?", "Frage über Netze?")
    for charset in ("ISO-8859-1", "rot13", "base64", "undefined"):
        po_path.write_text(text.replace("charset=UTF-8", f"charset={charset}"), "utf-8")
        result = invoke(runner, "import", str(po_path), "--from", "po")
        assert result.exit_code == 0, (charset, result.output)
        bank, _ = load_bank(project / "banks" / "demo" / "de.yaml")
        assert bank is not None and bank.items[2].question == "Frage über Netze?"


def test_a_merge_never_gives_a_digest_less_entry_the_banks_digest(
    project: Path, runner: CliRunner
) -> None:
    """An entry without its digest line merged: it took the bank's digest, kept the
    file's text, and the next import wrote that over the bank's translation."""
    po_path = translated_project(project, runner)
    assert invoke(runner, "import", str(po_path), "--from", "po").exit_code == 0
    po = polib.pofile(str(po_path))
    for entry in po:
        entry.comment = ""
    po.find("mesh|question", by="msgctxt").msgstr = "Frage Netz (PO)?"
    po.save(str(po_path))
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path)).exit_code == 0
    entry = polib.pofile(str(po_path)).find("mesh|question", by="msgctxt")
    assert (entry.msgstr, entry.flags) == ("Frage Netz?", ["fuzzy"])
    assert "this file had: Frage Netz (PO)?" in entry.tcomment
    assert invoke(runner, "import", str(po_path), "--from", "po").exit_code == 0
    bank, _ = load_bank(project / "banks" / "demo" / "de.yaml")
    assert bank is not None and bank.items[2].question == "Frage Netz?"


def test_a_text_translated_twice_in_the_file_keeps_both_through_a_merge(
    project: Path, runner: CliRunner
) -> None:
    """Two translators' files joined (`msgcat` keeps both entries of one context): the
    import skips the text, as which is newer the file does not say, but the merge of
    `translate --po` kept only the last entry and the other translation was lost. Both are
    kept: the first as the entry's text, the other in its comment, fuzzy until a
    translator chooses."""
    po_path = translated_project(project, runner)
    with po_path.open("a", encoding="utf-8") as joined:
        joined.write(
            '\n# Anna: shorter\nmsgctxt "mesh|question"\nmsgid "Question mesh?"\n'
            'msgstr "Netzfrage?"\n'
        )
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert "'mesh|question' is translated twice in this file; skipped" in result.output
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path)).exit_code == 0
    po = polib.pofile(str(po_path))
    entries = [e for e in po if e.msgctxt == "mesh|question"]
    assert len(entries) == 1
    assert (entries[0].msgstr, entries[0].flags) == ("Frage Netz?", ["fuzzy"])
    assert "this file translated it twice; the other: Netzfrage?\nAnna: shorter" in (
        entries[0].tcomment
    )


def test_a_translation_in_a_file_of_another_name_is_the_one_written(
    project: Path, runner: CliRunner
) -> None:
    """`banks/<topic>/<language>.yaml` is only the convention: a team keeps German in
    `demo/deutsch.yaml`. `translate --po` made a file with none of its translations, a
    PO import and `translate --update` wrote a second German bank beside it."""
    po_path = translated_project(project, runner)
    folder = project / "banks" / "demo"
    kept = folder / "deutsch.yaml"
    (folder / "de.yaml").rename(kept)
    assert invoke(runner, "import", str(po_path), "--from", "po").exit_code == 0
    result = invoke(runner, "translate", "demo", "--to", "de", "--update")
    assert result.exit_code == 0 and "nothing to add" in result.output, result.output
    fresh = project / "fresh.po"
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(fresh)).exit_code == 0
    assert sorted(p.name for p in folder.iterdir()) == ["deutsch.yaml", "en.yaml"]
    bank, _ = load_bank(kept)
    assert bank is not None
    assert (bank.items[0].question, bank.items[2].question) == ("Frage Ring?", "Frage Netz?")
    entry = polib.pofile(str(fresh)).find("mesh|question", by="msgctxt")
    assert entry.msgstr == "Frage Netz?"


def test_a_po_file_made_before_its_language_was_renamed_still_comes_in(
    project: Path, runner: CliRunner
) -> None:
    """German became `de-DE` (`formerly: {language: de}`) while a translator held the PO
    file of `de`, whose header a tool then rewrote in gettext's form (`de_DE` is what
    msginit, Poedit and Weblate write). The import wrote a new `de` bank beside the
    renamed one, and the merge refused the file as another language's."""
    po_path = translated_project(project, runner)
    de = project / "banks" / "demo" / "de.yaml"
    text = de.read_text(encoding="utf-8").replace("language: de\n", "language: de-DE\n", 1)
    de.write_text(text.replace("title:", "formerly: {language: de}\ntitle:", 1), "utf-8")
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in de.parent.iterdir()) == ["de.yaml", "en.yaml"]
    bank, _ = load_bank(de)
    assert bank is not None and bank.items[2].question == "Frage Netz?"
    po = polib.pofile(str(po_path))
    po.metadata["Language"] = "de_DE"
    po.save(str(po_path))
    result = invoke(runner, "translate", "demo", "--to", "de-DE", "--po", str(po_path))
    assert result.exit_code == 0, result.output
    merged = polib.pofile(str(po_path))
    assert merged.find("star|choice 2", by="msgctxt").msgstr == "Stern Wahl 2"


def test_entries_a_tool_stripped_of_their_msgctxt_are_placed_by_their_msgid(
    project: Path, runner: CliRunner
) -> None:
    """A platform that drops msgctxt on export: every entry was called "'' is translated
    twice" and skipped. An entry whose msgid is one text of the reference is that text's;
    one whose msgid is no text (or several) is skipped, saying why."""
    po_path = translated_project(project, runner)
    po = polib.pofile(str(po_path))
    for entry in po:
        entry.msgctxt = None
    po.find("Question tree?").msgid = "Question of a tree?"
    po.find("Question of a tree?").msgstr = "Frage Baum?"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0, result.output
    assert "translated twice" not in result.output
    assert "an entry without its msgctxt (a tool dropped it?), and its msgid is no text" in (
        result.output
    )
    bank, _ = load_bank(project / "banks" / "demo" / "de.yaml")
    assert bank is not None
    assert (bank.items[1].question, bank.items[2].question) == ("Question tree?", "Frage Netz?")
    assert bank.items[3].choices[1] == "Stern Wahl 2"


def test_a_po_file_in_a_former_language_of_the_reference_never_rewrites_it(
    project: Path, runner: CliRunner
) -> None:
    """The reference was `en-GB` once (`formerly: {language: en-GB}`): a PO file in
    `en-GB` was imported into the reference, its title overwritten, and `translate --to
    en-GB` took the reference for the translation."""
    po_path = translated_project(project, runner)
    en = project / "banks" / "demo" / "en.yaml"
    en.write_text(
        en.read_text("utf-8").replace("title:", "formerly: {language: en-GB}\ntitle:", 1),
        "utf-8",
    )
    before = en.read_bytes()
    po = polib.pofile(str(po_path))
    po.metadata["Language"] = "en_GB"
    po.save(str(po_path))
    for args in (["import", str(po_path), "--from", "po"], ["translate", "demo", "--to", "en-GB"]):
        result = invoke(runner, *args)
        assert result.exit_code == 1, result.output
        assert "'en-GB' is a language banks/demo/en.yaml had before" in result.stderr
    assert en.read_bytes() == before


@pytest.mark.parametrize("why", ["two banks", "a broken bank elsewhere"])
def test_a_translation_that_cannot_be_told_gets_no_new_bank(
    project: Path, runner: CliRunner, why: str
) -> None:
    """Two banks both the topic's German (one outside the topic's folder), or the German
    bank kept elsewhere with an error in it: `translate --update` and a PO import wrote a
    new `demo/de.yaml` beside them. Nothing is written, and the message names the bank."""
    po_path = translated_project(project, runner)
    de = project / "banks" / "demo" / "de.yaml"
    elsewhere = project / "banks" / "deutsch" / "demo.yaml"
    elsewhere.parent.mkdir()
    if why == "two banks":
        elsewhere.write_bytes(de.read_bytes())
    else:
        de.rename(elsewhere)
        text = elsewhere.read_text("utf-8")
        elsewhere.write_text(text.replace("answer: 1", "answer: 9", 1), "utf-8")
    before = {p: p.read_bytes() for p in (project / "banks").rglob("*.yaml")}
    for args in (
        ["import", str(po_path), "--from", "po"],
        ["translate", "demo", "--to", "de", "--update"],
    ):
        result = invoke(runner, *args)
        assert result.exit_code == 1, result.output
        assert "banks/deutsch/demo.yaml" in result.stderr
    assert {p: p.read_bytes() for p in (project / "banks").rglob("*.yaml")} == before


def test_a_merge_into_a_file_a_tool_stripped_of_msgctxt_keeps_its_translations(
    project: Path, runner: CliRunner
) -> None:
    """Every entry of a stripped file had the context "": the merge took them for one
    text translated many times, and every translation went into a single obsolete entry.
    They are placed by msgid first, as an import places them."""
    po_path = translated_project(project, runner)
    po = polib.pofile(str(po_path))
    for entry in po:
        entry.msgctxt = None
    po.save(str(po_path))
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path)).exit_code == 0
    merged = polib.pofile(str(po_path))
    assert merged.find("mesh|question", by="msgctxt").msgstr == "Frage Netz?"
    assert merged.find("star|choice 2", by="msgctxt").msgstr == "Stern Wahl 2"
    assert merged.obsolete_entries() == []
