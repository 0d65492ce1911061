"""PO files as translation tools and teams leave them: merged by gettext's tools (an
obsolete entry beside a live one, two files joined), cut short, holding characters that
Python's line splitting takes for line breaks, translator comments on untranslated
entries, or translating a text the bank has no key for. Each was lost or mangled work."""

from __future__ import annotations

from pathlib import Path

import polib
import pytest
from click.testing import CliRunner

from ankigen.bank.reader import load_bank
from ankigen.translation.po import po_language
from tests.helpers import invoke, item, write_bank

ITEMS = [item("ring"), item("tree")]


def po_of(project: Path, runner: CliRunner, *, description: bool = True) -> Path:
    """demo/en and the PO file of its translation into German, nothing translated yet;
    without `description`, the German bank has no description: key."""
    banks = project / "banks"
    write_bank(banks, items=ITEMS, description="Rings and trees.")
    assert invoke(runner, "translate", "demo", "--to", "de").exit_code == 0
    if not description:
        de = banks / "demo" / "de.yaml"
        lines = de.read_text("utf-8").splitlines(keepends=True)
        de.write_text("".join(x for x in lines if not x.startswith("description:")), "utf-8")
    po_path = project / "de.po"
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path)).exit_code == 0
    return po_path


def de_bank(project: Path) -> dict[str, str]:
    bank, problems = load_bank(project / "banks" / "demo" / "de.yaml")
    assert bank is not None, problems
    return {i.id: i.question for i in bank.items} | {"|description": bank.description}


def test_a_po_file_cut_short_is_refused_and_writes_nothing(
    project: Path, runner: CliRunner
) -> None:
    po_path = po_of(project, runner)
    po = polib.pofile(str(po_path))
    po.find("ring|question", by="msgctxt").msgstr = "Frage zum Ring, die hier abbricht"
    po.save(str(po_path))
    text = po_path.read_text("utf-8")
    cut = text[: text.index("die hier abbricht") + len("die hier")]
    po_path.write_text(cut, "utf-8")
    before = (project / "banks" / "demo" / "de.yaml").read_bytes()
    result = invoke(runner, "import", str(po_path))
    assert result.exit_code == 1
    assert f"{po_path}:{cut.count(chr(10)) + 1}: error: a string is not closed" in result.output
    assert (project / "banks" / "demo" / "de.yaml").read_bytes() == before


def test_a_line_separator_inside_a_text_survives_the_round_trip(
    project: Path, runner: CliRunner
) -> None:
    """U+2028 is a line break to Python's `str.splitlines`, which polib splits a file
    with; to gettext it is a character inside a string."""
    po_path = po_of(project, runner)
    po = polib.pofile(str(po_path))
    po.find("ring|question", by="msgctxt").msgstr = "Frage\u2028zum Ring?"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path))
    assert result.exit_code == 0, result.output
    assert de_bank(project)["ring"] == "Frage\u2028zum Ring?"
    again = invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path))
    assert again.exit_code == 0
    assert "unchanged" in invoke(runner, "import", str(po_path)).output


def test_a_merge_keeps_the_live_translation_over_an_obsolete_one(
    project: Path, runner: CliRunner
) -> None:
    """msgmerge may leave an obsolete `#~` entry of a text beside its live one; the live
    one is the translator's newest work, and a translator's comment on an entry not yet
    translated is theirs too."""
    po_path = po_of(project, runner)
    po = polib.pofile(str(po_path))
    live = po.find("ring|question", by="msgctxt")
    live.msgstr = "Neue Frage zum Ring?"
    po.find("tree|question", by="msgctxt").tcomment = "ask Anna about this term"
    stale = polib.POEntry(
        msgctxt="ring|question", msgid=live.msgid, msgstr="Alte Frage?", obsolete=True
    )
    po.append(stale)
    po.save(str(po_path))
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path)).exit_code == 0
    merged = polib.pofile(str(po_path))
    assert [e.msgstr for e in merged if e.msgctxt == "ring|question" and not e.obsolete] == [
        "Neue Frage zum Ring?"
    ]
    assert merged.find("tree|question", by="msgctxt").tcomment == "ask Anna about this term"
    assert invoke(runner, "import", str(po_path)).exit_code == 0
    assert de_bank(project)["ring"] == "Neue Frage zum Ring?"


def test_two_translations_of_one_text_are_not_chosen_between(
    project: Path, runner: CliRunner
) -> None:
    """`msgcat` of two files keeps both entries of a text (gettext keys them by context
    and msgid); which is newer the file does not say."""
    po_path = po_of(project, runner)
    po = polib.pofile(str(po_path))
    entry = po.find("ring|question", by="msgctxt")
    entry.msgstr = "Frage eins?"
    po.append(polib.POEntry(msgctxt=entry.msgctxt, msgid=entry.msgid, msgstr="Frage zwei?"))
    po.find("tree|question", by="msgctxt").msgstr = "Frage zum Baum?"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path))
    assert result.exit_code == 0, result.output
    assert result.output.count("'ring|question' is translated twice in this file; skipped") == 2
    assert de_bank(project)["ring"] == "Question ring?" and de_bank(project)["tree"] == (
        "Frage zum Baum?"
    )


def test_the_same_translation_twice_is_no_choice(project: Path, runner: CliRunner) -> None:
    """A text's entry and a copy a tool stripped of its msgctxt, both with one
    translation: both were skipped as "translated twice", though there is nothing to
    choose."""
    po_path = po_of(project, runner)
    po = polib.pofile(str(po_path))
    entry = po.find("ring|question", by="msgctxt")
    entry.msgstr = "Frage Ring?"
    po.append(polib.POEntry(msgid=entry.msgid, msgstr="Frage Ring?"))
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path))
    assert result.exit_code == 0, result.output
    assert "twice" not in result.output
    assert de_bank(project)["ring"] == "Frage Ring?"


def test_a_text_the_bank_has_no_key_for_is_said_not_dropped(
    project: Path, runner: CliRunner
) -> None:
    po_path = po_of(project, runner, description=False)
    po = polib.pofile(str(po_path))
    po.find("|description", by="msgctxt").msgstr = "Ringe und Bäume."
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path))
    assert result.exit_code == 0
    assert "'|description' was not written" in result.output
    copy = invoke(runner, "import", str(po_path), "-o", "copy.yaml")
    assert copy.exit_code == 0
    bank, _ = load_bank(project / "copy.yaml")
    assert bank is not None and bank.description == "Ringe und Bäume."


@pytest.mark.parametrize(
    ("header", "tag"),
    [
        ("pt_BR", "pt-BR"),  # gettext's ll_CC, as msginit, Poedit and Weblate write it
        ("sr@latin", "sr-Latn"),
        ("sr_RS@latin", "sr-Latn-RS"),
        ("ca_ES@valencia", "ca-ES-valencia"),
        ("en@quot", "en"),  # gettext's English with typographic quotes: English
        ("de_DE@euro", "de-DE"),
        ("de@abcd", ""),  # four letters would read as a script
        ("pt_BR.UTF-8", ""),
    ],
)
def test_a_header_language_in_gettexts_form_is_read_as_bcp_47(header: str, tag: str) -> None:
    po = polib.POFile()
    po.metadata = {"Language": header}
    assert po_language(po) == tag


def test_a_po_file_whose_tool_added_a_region_goes_into_the_teams_bank(
    project: Path, runner: CliRunner
) -> None:
    """Poedit writes the region it is set to: the team's `de` came back as `de_DE`. It
    started a second bank, `de-DE.yaml`, and the next `translate --po` refused the
    translator's file as another language (--force would have replaced it)."""
    po_path = po_of(project, runner)
    po = polib.pofile(str(po_path))
    po.metadata["Language"] = "de_DE"
    po.find("ring|question", by="msgctxt").msgstr = "Frage zum Ring?"
    po.find("tree|question", by="msgctxt").msgstr = "Frage zum Baum?"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path))
    assert result.exit_code == 0, result.output
    assert "no bank of 'demo' is in 'de-DE': its translations go into" in result.output
    assert de_bank(project)["ring"] == "Frage zum Ring?"
    (project / "banks" / "demo" / "de.yaml").write_text(
        (project / "banks" / "demo" / "de.yaml").read_text("utf-8").replace("Baum", "Wald"),
        "utf-8",
    )
    result = invoke(runner, "translate", "demo", "--to", "de", "--po", str(po_path))
    assert result.exit_code == 0, result.output
    merged = polib.pofile(str(po_path))
    assert merged.find("tree|question", by="msgctxt").msgstr == "Frage zum Wald?"
    assert merged.find("ring|question", by="msgctxt").msgstr == "Frage zum Ring?"
    assert sorted(p.name for p in (project / "banks" / "demo").iterdir()) == [
        "de.yaml",
        "en.yaml",
    ]


@pytest.mark.parametrize(
    ("banks", "header", "into"),
    [
        (["de", "de-AT"], "de_AT", "de-AT.yaml"),  # a bank of its own wins
        (["pt-BR", "pt-PT"], "pt", "pt.yaml"),  # two variants: neither is chosen
        (["pt-BR"], "pt_PT", "pt-PT.yaml"),  # another variant: a bank of its own
        (["sr"], "sr@latin", "sr-Latn.yaml"),  # another script
        (["zh"], "zh_TW", "zh-TW.yaml"),  # a region that stands for another script
    ],
)
def test_a_region_is_not_dropped_where_it_tells_banks_apart(
    project: Path, runner: CliRunner, banks: list[str], header: str, into: str
) -> None:
    bank_dir = project / "banks" / "demo"
    write_bank(project / "banks", items=ITEMS)
    for language in banks:
        assert invoke(runner, "translate", "demo", "--to", language).exit_code == 0
    po_path = project / "some.po"
    assert (
        invoke(runner, "translate", "demo", "--to", banks[0], "--po", str(po_path)).exit_code == 0
    )
    po = polib.pofile(str(po_path))
    po.metadata["Language"] = header
    po.find("ring|question", by="msgctxt").msgstr = "Ring?"
    po.save(str(po_path))
    before = {path.name: path.read_bytes() for path in bank_dir.iterdir()}
    result = invoke(runner, "import", str(po_path))
    assert result.exit_code == 0, result.output
    assert "go into" not in result.output
    written = {path.name for path in bank_dir.iterdir()}
    assert written - set(before) == ({into} - set(before))
    assert all(
        (bank_dir / name).read_bytes() == data for name, data in before.items() if name != into
    )


def test_fuzzy_translations_are_left_out_and_counted(project: Path, runner: CliRunner) -> None:
    """A fuzzy entry (msgmerge's guess, Poedit's "Needs work") is not imported, as msgfmt
    leaves it out; the translator is told how many were, where it said nothing."""
    po_path = po_of(project, runner)
    po = polib.pofile(str(po_path))
    guessed = po.find("ring|question", by="msgctxt")
    guessed.msgstr, guessed.flags = "Frage zum Ring?", ["fuzzy"]
    po.find("tree|question", by="msgctxt").msgstr = "Frage zum Baum?"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path))
    assert result.exit_code == 0, result.output
    assert "1 translation from" in result.output
    assert "; 1 fuzzy translation not imported" in result.output
    assert de_bank(project)["ring"] == "Question ring?"
    assert de_bank(project)["tree"] == "Frage zum Baum?"


def test_fuzzy_translations_of_a_renamed_item_are_counted_too(
    project: Path, runner: CliRunner
) -> None:
    """A PO file made before the reference renamed an item (`formerly:`): its entries
    still name the old id, and the count of fuzzy ones left them out."""
    po_path = po_of(project, runner)
    po = polib.pofile(str(po_path))
    for context in ("ring|question", "tree|question"):
        entry = po.find(context, by="msgctxt")
        entry.msgstr, entry.flags = f"Frage {context}?", ["fuzzy"]
    po.save(str(po_path))
    ring = item("ring", question="Question ring?")
    write_bank(
        project / "banks", items=[{**ring, "id": "band", "formerly": ["ring"]}, item("tree")]
    )
    result = invoke(runner, "import", str(po_path))
    assert result.exit_code == 0, result.output
    assert "; 2 fuzzy translations not imported" in result.output


def test_a_region_dropped_where_o_names_the_bank_and_never_into_the_reference(
    project: Path, runner: CliRunner
) -> None:
    """`-o` naming the team's `de` bank refused a `de_DE` file (then `-o new.yaml` made
    the second bank the region rule prevents); an `en_US` file for the reference `en`
    silently started an `en-US` translation of English."""
    po_path = po_of(project, runner)
    po = polib.pofile(str(po_path))
    po.metadata["Language"] = "de_DE"
    po.find("ring|question", by="msgctxt").msgstr = "Frage zum Ring?"
    po.save(str(po_path))
    result = invoke(runner, "import", str(po_path), "-o", "banks/demo/de.yaml")
    assert result.exit_code == 0, result.output
    assert "is in 'de', the PO file's 'de-DE' but for the region" in result.output
    assert de_bank(project)["ring"] == "Frage zum Ring?"
    po.metadata["Language"] = "en_US"
    po.save(str(po_path))
    before = {p.name: p.read_bytes() for p in (project / "banks" / "demo").iterdir()}
    result = invoke(runner, "import", str(po_path))
    assert result.exit_code == 1
    assert "is the reference language of 'demo' ('en') but for the region" in result.output
    assert {p.name: p.read_bytes() for p in (project / "banks" / "demo").iterdir()} == before
    # nor where `-o` names the reference itself (it rewrote every text of it)
    result = invoke(runner, "import", str(po_path), "-o", "banks/demo/en.yaml")
    assert result.exit_code == 1
    assert {p.name: p.read_bytes() for p in (project / "banks" / "demo").iterdir()} == before


def test_a_file_without_a_region_is_merged_only_where_an_import_would_place_it(
    project: Path, runner: CliRunner
) -> None:
    """Banks `de-AT` and `de-CH`, a file saying `de`: an import starts a `de` bank (it
    is either's), so `translate --po` into either must not take it for its own."""
    write_bank(project / "banks", items=ITEMS)
    for language in ("de-AT", "de-CH"):
        assert invoke(runner, "translate", "demo", "--to", language).exit_code == 0
    po_path = project / "de.po"
    assert invoke(runner, "translate", "demo", "--to", "de-AT", "--po", str(po_path)).exit_code == 0
    po = polib.pofile(str(po_path))
    po.metadata["Language"] = "de"
    po.save(str(po_path))
    before = po_path.read_bytes()
    result = invoke(runner, "translate", "demo", "--to", "de-AT", "--po", str(po_path))
    assert result.exit_code == 1 and "is not a PO file of 'demo' in 'de-AT'" in result.output
    assert po_path.read_bytes() == before
