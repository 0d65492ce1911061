"""Every command writes an author's or a translator's file as safely as `build` writes
packages: never over other work without --force, never over its own input, through
symbolic links, keeping the mode, never into a FIFO or a device, never a bank that
would not load (`userfile`)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import polib
import pytest
from click.testing import CliRunner

from ankigen.bank.reader import load_bank
from tests.helpers import REPO, AnkiCollection, invoke, item, write_bank

GIFT = "::one:: Which collective gathers every shard? {=All-gather ~Reduce ~Broadcast}\n"


@pytest.fixture
def shipped(project: Path) -> Path:
    """The shipped banks, in the project."""
    banks = project / "banks"
    shutil.rmtree(banks)
    shutil.copytree(REPO / "banks", banks)
    return banks


def test_import_never_replaces_a_bank_without_force(shipped: Path, runner: CliRunner) -> None:
    bank = shipped / "fsdp" / "en.yaml"
    before = bank.read_bytes()
    Path("a.gift").write_text(GIFT, encoding="utf-8")
    args = ["import", "a.gift", "--topic", "fsdp", "--lang", "en", "-o", str(bank)]
    refused = invoke(runner, *args)
    assert refused.exit_code == 1
    assert f"error: {bank} exists and holds" in refused.output
    assert "--force to replace it" in refused.output
    assert bank.read_bytes() == before
    forced = invoke(runner, *args, "--force")
    assert forced.exit_code == 0, forced.output
    assert b"All-gather" in bank.read_bytes()


def test_no_command_writes_over_its_own_input(project: Path, runner: CliRunner) -> None:
    Path("x.gift").write_text(GIFT, encoding="utf-8")
    for force in ((), ("--force",)):
        result = invoke(
            runner, "import", "x.gift", "--topic", "t", "--lang", "en", "-o", "x.gift", *force
        )
        assert result.exit_code == 1
        assert "x.gift is the input of this command" in result.output
    assert Path("x.gift").read_text(encoding="utf-8") == GIFT
    bank = write_bank(project / "banks")
    same = invoke(runner, "export", str(bank), "--to", "gift", "-o", str(bank), "--force")
    assert same.exit_code == 1 and "is the input of this command" in same.output


def test_an_export_replaces_only_its_own_earlier_export(project: Path, runner: CliRunner) -> None:
    bank = write_bank(project / "banks")
    other = write_bank(project / "banks", "other")
    for fmt in ("gift", "moodle-xml"):
        out = f"demo.{fmt}"
        assert invoke(runner, "export", str(bank), "--to", fmt, "-o", out).exit_code == 0
        again = invoke(runner, "export", str(bank), "--to", fmt, "-o", out)
        assert again.exit_code == 0 and "unchanged demo." in again.output
        # another bank's export over it: a different source
        clash = invoke(runner, "export", str(other), "--to", fmt, "-o", out)
        assert clash.exit_code == 1 and "not " + fmt in clash.output
    # CSV carries no mark: an existing CSV is replaced only with --force
    assert invoke(runner, "export", str(bank), "--to", "csv", "-o", "d.csv").exit_code == 0
    write_bank(project / "banks", items=[item("one"), item("three")])
    assert invoke(runner, "export", str(bank), "--to", "csv", "-o", "d.csv").exit_code == 1
    assert (
        invoke(runner, "export", str(bank), "--to", "csv", "-o", "d.csv", "--force").exit_code == 0
    )
    # banks are never replaced by an export
    refused = invoke(runner, "export", str(bank), "--to", "gift", "-o", str(other))
    assert refused.exit_code == 1 and other.read_text(encoding="utf-8").startswith("topic: other")
    dash = invoke(runner, "export", str(bank), "--to", "gift", "-o", "-")
    assert dash.exit_code == 0 and dash.stdout.startswith("// demo quiz (en), exported by")
    assert not Path("-").exists()


def test_fifos_devices_and_folders_are_refused_never_opened(
    project: Path, runner: CliRunner
) -> None:
    bank = write_bank(project / "banks")
    fifo = project / "pipe"
    os.mkfifo(fifo)
    result = invoke(runner, "export", str(bank), "--to", "gift", "-o", str(fifo), "--force")
    assert result.exit_code == 1
    assert "pipe is a FIFO (named pipe): ankigen writes only regular files" in result.output
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    (project / "folder").mkdir()
    folder = invoke(runner, "export", str(bank), "--to", "gift", "-o", "folder/", "--force")
    assert folder.exit_code != 0


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a device needs root")
def test_a_device_node_is_refused_as_root(project: Path, runner: CliRunner) -> None:
    bank = write_bank(project / "banks")
    null = project / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    result = invoke(runner, "export", str(bank), "--to", "gift", "-o", str(null), "--force")
    assert result.exit_code == 1 and "null is a device" in result.output
    assert stat.S_ISCHR(null.stat().st_mode)


def translated_po(project: Path, runner: CliRunner, language: str = "de") -> Path:
    po_path = project / f"{language}.po"
    result = invoke(runner, "translate", "collectives", "--to", language, "--po", str(po_path))
    assert result.exit_code == 0, result.output
    po = polib.pofile(str(po_path))
    for entry in po:
        entry.msgstr = f"[{language}] {entry.msgid}"
    po.save(str(po_path))
    return po_path


def test_a_second_po_file_merges_and_keeps_every_translation(
    shipped: Path, project: Path, runner: CliRunner
) -> None:
    po_path = translated_po(project, runner)
    po = polib.pofile(str(po_path))
    filled = len(po.translated_entries())
    assert filled > 40
    # a text that is gone from the reference since
    po.append(polib.POEntry(msgctxt="gone|question", msgid="Old?", msgstr="Alt?"))
    po.save(str(po_path))
    # the reference changes: one text edited
    en = shipped / "collectives" / "en.yaml"
    reference, _ = load_bank(en)
    assert reference is not None
    first = reference.items[0]
    text = en.read_text(encoding="utf-8")
    assert text.count(first.question) == 1
    en.write_text(text.replace(first.question, first.question + " (edited)"), encoding="utf-8")
    result = invoke(runner, "translate", "collectives", "--to", "de", "--po", str(po_path))
    assert result.exit_code == 0, result.output
    assert result.output == f"merged into {po_path}: {filled} texts, {filled - 1} translated\n"
    po = polib.pofile(str(po_path))
    edited = po.find(f"{first.id}|question", by="msgctxt")
    assert edited.msgstr == f"[de] {first.question}" and "fuzzy" in edited.flags
    assert edited.previous_msgid == first.question
    assert [(e.msgctxt, e.msgstr) for e in po.obsolete_entries()] == [("gone|question", "Alt?")]
    assert all(e.msgstr == f"[de] {e.msgid}" for e in po.translated_entries())
    checked = subprocess.run(
        ["msgfmt", "--check", "-o", os.devnull, str(po_path)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr


def test_a_po_file_of_another_topic_is_not_merged_into(shipped: Path, runner: CliRunner) -> None:
    Path("de.po").write_text("not a PO file of ours\n", encoding="utf-8")
    result = invoke(runner, "translate", "collectives", "--to", "de", "--po", "de.po")
    assert result.exit_code == 1 and "not a readable PO file" in result.output
    assert Path("de.po").read_text(encoding="utf-8") == "not a PO file of ours\n"
    assert invoke(runner, "translate", "zero", "--to", "de", "--po", "z.po").exit_code == 0
    other = invoke(runner, "translate", "collectives", "--to", "de", "--po", "z.po")
    assert other.exit_code == 1 and "is not a PO file of 'collectives' in 'de'" in other.output


def test_po_import_keeps_a_newer_edit_made_in_the_bank(
    shipped: Path, project: Path, runner: CliRunner
) -> None:
    assert invoke(runner, "translate", "collectives", "--to", "de").exit_code == 0
    po_path = translated_po(project, runner)
    de = shipped / "collectives" / "de.yaml"
    bank, _ = load_bank(de)
    assert bank is not None
    question = bank.items[0].question
    de.write_text(de.read_text(encoding="utf-8").replace(question, "Neu im Stapel"), "utf-8")
    result = invoke(runner, "import", str(po_path), "--from", "po")
    assert result.exit_code == 0, result.output
    assert (
        f"warning: '{bank.items[0].id}|question': the bank's text changed since this PO file "
        "was made; kept the bank's 'Neu im Stapel'" in result.output
    )
    after, _ = load_bank(de)
    assert after is not None and after.items[0].question == "Neu im Stapel"
    assert after.items[1].question.startswith("[de] ")
    written = int(result.stdout.split(": ")[1].split()[0])
    po = polib.pofile(str(po_path))
    assert written == len(po.translated_entries()) - 1


def test_po_import_refuses_the_reference_language(shipped: Path, runner: CliRunner) -> None:
    assert invoke(runner, "translate", "collectives", "--to", "de", "--po", "de.po").exit_code == 0
    po = polib.pofile("de.po")
    po.metadata["Language"] = "en"
    for entry in po:
        entry.msgstr = "overwritten"
    po.save("de.po")
    before = (shipped / "collectives" / "en.yaml").read_bytes()
    result = invoke(runner, "import", "de.po", "--from", "po")
    assert result.exit_code == 1
    assert "is the reference language of 'collectives'" in result.output
    assert (shipped / "collectives" / "en.yaml").read_bytes() == before


def test_translate_keeps_every_field_and_po_carries_every_why(
    project: Path, runner: CliRunner
) -> None:
    first = item("a", recall=True)
    first["choices"] = [{"text": "yes", "why": "Because."}, {"text": "no", "why": "Not so."}]
    write_bank(project / "banks", items=[first, item("b", 2)])
    assert invoke(runner, "translate", "demo", "--to", "de").exit_code == 0
    de, problems = load_bank(project / "banks" / "demo" / "de.yaml")
    assert de is not None, problems
    assert de.items[0].recall and de.items[0].whys == ("Because.", "Not so.")
    assert invoke(runner, "translate", "demo", "--to", "fr", "--po", "fr.po").exit_code == 0
    po = polib.pofile("fr.po")
    assert po.find("a|why 1", by="msgctxt").msgid == "Because."
    po.find("a|why 2", by="msgctxt").msgstr = "Pas ainsi."
    po.find("a|choice 2", by="msgctxt").msgstr = "non"
    po.save("fr.po")
    result = invoke(runner, "import", "fr.po", "--from", "po")
    assert result.exit_code == 0, result.output
    assert result.stdout == "wrote banks/demo/fr.yaml: 2 translations from fr.po\n"
    fr, problems = load_bank(project / "banks" / "demo" / "fr.yaml")
    assert fr is not None, problems
    assert fr.items[0].choices == ("yes", "non") and fr.items[0].whys == ("Because.", "Pas ainsi.")
    assert fr.items[0].recall


def test_a_plain_choice_is_given_the_why_a_po_file_brings(project: Path, runner: CliRunner) -> None:
    first = item("a")
    first["choices"] = [{"text": "yes", "why": "Because."}, "no", {"text": "maybe", "why": "Hm."}]
    write_bank(project / "banks", items=[first])
    de = project / "banks" / "demo" / "de.yaml"
    # a translation started before the reference had its whys
    de.write_text(
        "topic: demo\nlanguage: de\ntitle: Quiz\nitems:\n"
        "  - id: a  # kept\n    question: Frage?\n"
        "    choices:\n      - ja\n      - nein\n      - text: vielleicht\n"
        "    answer: 1\n    explanation: Weil.\n",
        encoding="utf-8",
    )
    po = polib.POFile(wrapwidth=0)
    po.metadata = {"Language": "de", "X-Ankigen-Topic": "demo"}
    po.append(polib.POEntry(msgctxt="a|why 1", msgid="Because.", msgstr="Darum."))
    po.append(polib.POEntry(msgctxt="a|why 3", msgid="Hm.", msgstr="Hm?"))
    po.save("de.po")
    result = invoke(runner, "import", "de.po", "--from", "po")
    assert result.exit_code == 0, result.output
    assert result.stdout == "wrote banks/demo/de.yaml: 2 translations from de.po\n"
    bank, problems = load_bank(de)
    assert bank is not None, problems
    assert bank.items[0].choices == ("ja", "nein", "vielleicht")
    assert bank.items[0].whys == ("Darum.", "", "Hm?")
    assert "- id: a  # kept\n" in de.read_text(encoding="utf-8")


def test_update_on_a_wide_dash_layout_still_loads(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[item("a"), item("b"), item("c")])
    de = project / "banks" / "demo" / "de.yaml"
    de.write_text(
        "topic: demo\nlanguage: de\ntitle: Quiz\nitems:\n"
        "-   id: b\n    question: Was?\n    choices: [x, y]\n    answer: 1\n    explanation: Weil.\n",
        encoding="utf-8",
    )
    result = invoke(runner, "translate", "demo", "--to", "de", "--update")
    assert result.exit_code == 0, result.output
    bank, problems = load_bank(de)
    assert bank is not None, problems
    assert [i.id for i in bank.items] == ["a", "b", "c"]


def test_writes_go_through_links_and_keep_the_mode(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[item("a"), item("b")])
    shared = project / "shared-de.yaml"
    assert invoke(runner, "translate", "demo", "--to", "de").exit_code == 0
    de = project / "banks" / "demo" / "de.yaml"
    de.rename(shared)
    de.symlink_to(shared)
    shared.chmod(0o600)
    write_bank(project / "banks", items=[item("a"), item("b"), item("c")])
    result = invoke(runner, "translate", "demo", "--to", "de", "--update")
    assert result.exit_code == 0, result.output
    assert de.is_symlink() and de.resolve() == shared.resolve()
    assert "- id: c" in shared.read_text(encoding="utf-8")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o600


def test_a_bank_that_would_not_load_is_never_written(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[item("a"), item("b")])
    po = polib.POFile(wrapwidth=0)
    po.metadata = {"Language": "de", "X-Ankigen-Topic": "demo"}
    # two choices made the same: the bank would not load
    po.append(polib.POEntry(msgctxt="a|choice 1", msgid="a choice 1", msgstr="gleich"))
    po.append(polib.POEntry(msgctxt="a|choice 2", msgid="a choice 2", msgstr="gleich"))
    po.save("de.po")
    result = invoke(runner, "import", "de.po", "--from", "po")
    assert result.exit_code == 1 and "repeats choice 1" in result.output
    assert not (project / "banks" / "demo" / "de.yaml").exists()


def test_lock_conflict_markers_are_named_with_the_way_out(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    assert invoke(runner, "build").exit_code == 0
    lock = project / "banks" / "ankigen.lock"
    lines = lock.read_text(encoding="utf-8").splitlines(keepends=True)
    conflicted = [
        *lines[:3],
        "<<<<<<< HEAD\n",
        *lines[3:5],
        "=======\n",
        *lines[3:5],
        ">>>>>>> b\n",
        *lines[5:],
    ]
    lock.write_text("".join(conflicted), encoding="utf-8")
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert "banks/ankigen.lock:4: the lock file holds git merge conflict markers" in result.output
    assert "take one side whole" in result.output and "delete the lock" in result.output


def test_a_deleted_lock_reports_what_learners_will_see(
    project: Path, runner: CliRunner, collection: AnkiCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = [item(f"i{n}") for n in range(6)]
    write_bank(project / "banks", items=items)
    assert invoke(runner, "build").exit_code == 0
    package = project / "out" / "demo.en.apkg"
    assert collection.import_package(package).new == 6
    (project / "banks" / "ankigen.lock").unlink()
    items[0] = item("i0", explanation="Edited.")
    write_bank(project / "banks", items=items)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000100")
    result = invoke(runner, "build", "--json")
    deck = json.loads(result.stdout)["decks"][0]
    assert (deck["new"], deck["changed"], deck["unchanged"]) == (0, 1, 5)
    # as the real Anki sees it
    log = collection.import_package(package)
    assert (log.new, log.updated, log.duplicate) == (0, 1, 5)


def test_a_po_file_in_gettexts_own_language_form_and_with_plurals(
    project: Path, runner: CliRunner
) -> None:
    write_bank(project / "banks", items=[item("a"), item("b")])
    assert invoke(runner, "translate", "demo", "--to", "de-DE", "--po", "de.po").exit_code == 0
    po = polib.pofile("de.po")
    po.metadata["Language"] = "de_DE"
    po.find("a|question", by="msgctxt").msgstr = "Frage a?"
    po.append(
        polib.POEntry(
            msgctxt="a|count", msgid="one", msgid_plural="many", msgstr_plural={0: "x", 1: "y"}
        )
    )
    po.save("de.po")
    result = invoke(runner, "import", "de.po")
    assert result.exit_code == 0, result.output
    assert "'a|count' has plural forms, which no bank text has; skipped" in result.output
    assert "wrote banks/demo/de-DE.yaml: 1 translation from de.po" in result.output


def test_a_po_import_into_a_fifo_is_refused_never_opened(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[item("a"), item("b")])
    assert invoke(runner, "translate", "demo", "--to", "de", "--po", "de.po").exit_code == 0
    os.mkfifo(project / "pipe.yaml")
    result = invoke(runner, "import", "de.po", "-o", "pipe.yaml")
    assert result.exit_code == 1
    assert "pipe.yaml is a FIFO (named pipe): ankigen writes only regular files" in result.output
