"""What a rebuild changes for learners: counts, JSON, warnings with remedies, retired items."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ankigen.bank.model import Bank, Parity
from ankigen.core.errors import Diagnostic
from tests.helpers import (
    REPO,
    AnkiCollection,
    invoke,
    item,
    rewrite_entry,
    without_versions,
    write_bank,
)


def test_json_report_on_stdout(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[item("a"), item("b")])
    invoke(runner, "build")
    write_bank(project / "banks", items=[item("a", question="New?"), item("c")])
    result = invoke(runner, "build", "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert re.fullmatch(r"2023\.11\.14\+[0-9a-f]{8}", report["decks"][0].pop("version"))
    assert report == {
        "decks": [
            {
                "topic": "demo",
                "language": "en",
                "path": "out/demo.en.apkg",
                "notes": 2,
                "new": 1,
                "changed": 1,
                "unchanged": 0,
                "removed": 1,
                "retired": 0,
                "restored": 0,
                "written": True,
            }
        ]
    }


def test_removed_item_warns_with_the_remedy(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[item("a"), item("gone")])
    invoke(runner, "build")
    write_bank(project / "banks", items=[item("a")])
    result = invoke(runner, "build")
    assert result.exit_code == 0
    assert (
        "banks/demo/en.yaml:4: warning: 1 item(s) removed since the last build (gone): "
        "Anki never deletes notes on re-import, so learners keep them; put the item back "
        "with `retired: true`" in result.stderr
    )


def test_renamed_deck_warns_with_the_remedy(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    invoke(runner, "build")
    write_bank(project / "banks", title="New title")
    result = invoke(runner, "build")
    assert (
        "banks/demo/en.yaml:3: warning: the deck is renamed from 'demo quiz (en)' to "
        "'New title (en)'" in result.stderr
    )
    assert 'set `deck: "demo quiz (en)"` to keep the old name' in result.stderr


def test_changed_templates_warn(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    invoke(runner, "build")
    lock = project / "banks" / "ankigen.lock"
    data = json.loads(lock.read_text(encoding="utf-8"))
    data["notetype"]["hash"] = "0" * 16  # as if built by a version with other templates
    lock.write_text(json.dumps(data), encoding="utf-8")
    result = invoke(runner, "build")
    assert (
        "banks/ankigen.lock:2: warning: the card templates changed since the last build"
        in result.stderr
    )


def test_retired_items_stay_tagged_and_are_counted(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    write_bank(project / "banks", items=[item("a"), item("old", retired=True)])
    result = invoke(runner, "build")
    assert "2 notes (2 new, 0 changed, 0 unchanged, 0 removed, 1 retired)" in result.stdout
    collection.import_package(project / "out" / "demo.en.apkg")
    assert collection.note_by_item("old").tags == ["ankigen::retired"]
    assert collection.note_by_item("a").tags == []
    assert [
        collection.col.get_note(n)["ItemId"]
        for n in collection.col.find_notes("tag:ankigen::retired")
    ] == ["old"]


def test_unchanged_decks_are_not_rewritten(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", "one")
    write_bank(project / "banks", "two")
    invoke(runner, "build")
    one, two = project / "out" / "one.en.apkg", project / "out" / "two.en.apkg"
    # a rewrite replaces the file, so it gets a new inode
    inodes = (one.stat().st_ino, two.stat().st_ino)
    content = two.read_bytes()
    write_bank(project / "banks", "one", items=[item("one"), item("two", question="Edited?")])
    result = invoke(runner, "build")
    assert without_versions(result.stdout).splitlines() == [
        "wrote out/one.en.apkg: 2 notes (0 new, 1 changed, 1 unchanged, 0 removed)",
        "up to date out/two.en.apkg: 2 notes",
    ]
    assert one.stat().st_ino != inodes[0]
    assert two.stat().st_ino == inodes[1]
    assert two.read_bytes() == content


def test_a_damaged_package_is_rebuilt(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    invoke(runner, "build")
    package = project / "out" / "demo.en.apkg"
    good = package.read_bytes()
    package.write_bytes(b"garbage")
    assert "wrote out/demo.en.apkg" in invoke(runner, "build").stdout
    assert package.read_bytes() == good


def test_deck_description_is_generated_and_localized(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    write_bank(
        project / "banks",
        language="bn",
        description="বিবরণ",
        level="মধ্যম",
        source="A quiz page",
        license="CC BY 4.0",
    )
    invoke(runner, "build")
    collection.import_package(project / "out" / "demo.bn.apkg")
    deck = collection.col.decks.by_name("demo quiz (bn)")
    assert deck is not None
    desc = deck["desc"]
    for expected in (
        "<b>demo quiz</b>",
        "বিবরণ",
        "স্তর: মধ্যম",
        "প্রশ্ন: 2",
        "ভাষা: বাংলা",
        "উৎস: A quiz page",
        "লাইসেন্স: CC BY 4.0",
        "সংস্করণ: <code>",
    ):
        assert expected in desc


def test_content_version_changes_with_content(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    def version() -> str:
        invoke(runner, "build")
        with __import__("zipfile").ZipFile(project / "out" / "demo.en.apkg") as z:
            data = z.read("collection.anki2")
        marker = b"Version: <code>"
        start = data.index(marker) + len(marker)
        return data[start : start + 19].decode()

    write_bank(project / "banks")
    first = version()
    assert version() == first
    write_bank(project / "banks", items=[item("one"), item("two", explanation="Better.")])
    assert version() != first


def test_no_progress_when_not_a_terminal(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    result = invoke(runner, "build")
    assert "building" not in result.stderr


def test_a_build_with_nothing_changed_reads_no_bank(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_bank(project / "banks", "one", language="hi", items=[item("a")])  # 1 warning
    write_bank(project / "banks", "two")
    first = invoke(runner, "build")
    assert first.exit_code == 0

    import ankigen.builder.pipeline

    def no_parsing(*args: object, **kwargs: object) -> None:
        raise AssertionError("a bank was parsed")

    monkeypatch.setattr(ankigen.builder.pipeline, "check_outlines", no_parsing)
    again = invoke(runner, "build")
    assert again.exit_code == 0
    assert without_versions(again.stdout) == (
        "up to date out/one.hi.apkg: 1 note\nup to date out/two.en.apkg: 2 notes\n"
    )
    assert again.stderr == "1 warning in the banks; 'ankigen lint' lists them\n"
    # any change to an input, or to an output, means a real build
    (project / "out" / "two.en.apkg").unlink()
    with pytest.raises(AssertionError, match="a bank was parsed"):
        invoke(runner, "build")
    monkeypatch.undo()


def test_a_build_with_nothing_changed_imports_only_what_it_reads(
    project: Path, runner: CliRunner
) -> None:
    """Imports were most of such a build's time: it is a replay (`builder.replay`), which
    loads its own few modules and none of the bank format, the checks, the build proper,
    the command line or the libraries' records."""
    import subprocess
    import sys

    write_bank(project / "banks")
    assert invoke(runner, "build").exit_code == 0
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(' '.join(sorted(sys.modules)), file=sys.stderr))\n"
        "from ankigen.cli.entry import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "build"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("up to date out/demo.en.apkg")
    loaded = set(done.stderr.split())
    assert {name for name in loaded if name.startswith("ankigen")} == {
        "ankigen",
        "ankigen.bank",
        "ankigen.bank.folder",
        "ankigen.builder",
        "ankigen.builder.replay",
        "ankigen.cli",
        "ankigen.cli.entry",
        "ankigen.cli.quick",
        "ankigen.cli.streams",
        "ankigen.core",
        "ankigen.core.jsondata",
        "ankigen.core.process",
        "ankigen.core.reading",
        "ankigen.core.secret",
        "ankigen.core.version",
    }
    heavy = {"click", "yaml", "genanki", "multiprocessing", "sqlite3", "tomllib"}
    heavy |= {"dataclasses", "inspect", "typing"}  # the records of everything else
    assert not heavy & loaded, sorted(heavy & loaded)


def test_an_edit_replans_only_its_own_deck(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch, collection: AnkiCollection
) -> None:
    import ankigen.builder.locked
    import ankigen.checks.across
    import ankigen.checks.incremental
    import ankigen.checks.parity
    import ankigen.checks.rules
    import ankigen.checks.run
    import ankigen.checks.translation

    write_bank(project / "banks", "one")
    write_bank(project / "banks", "two")
    assert invoke(runner, "build").exit_code == 0
    two = (project / "out" / "two.en.apkg").read_bytes()

    planned: list[str] = []
    parsed: list[str] = []
    real_plan, real_parse = ankigen.builder.deckplan.plan_deck, ankigen.checks.rules.parse_bank
    monkeypatch.setattr(
        ankigen.builder.jobs,
        "plan_deck",
        lambda bank, *a: planned.append(bank.topic) or real_plan(bank, *a),
    )
    monkeypatch.setattr(
        ankigen.checks.rules,
        "parse_bank",
        lambda path, data, *rest: (
            parsed.append(Path(path).parent.name) or real_parse(path, data, *rest)
        ),
    )
    write_bank(project / "banks", "one", items=[item("one", question="Edited?"), item("two", 2)])
    result = invoke(runner, "build")
    assert without_versions(result.stdout).splitlines() == [
        "wrote out/one.en.apkg: 2 notes (0 new, 1 changed, 1 unchanged, 0 removed)",
        "up to date out/two.en.apkg: 2 notes",
    ]
    assert (planned, parsed) == (["one"], ["one"])
    assert (project / "out" / "two.en.apkg").read_bytes() == two
    collection.import_package(project / "out" / "one.en.apkg")
    assert collection.note_by_item("one")["Question"] == "Edited?"

    # a lock entry that no longer matches means the deck is planned again
    lock = project / "banks" / "ankigen.lock"
    data = json.loads(lock.read_text(encoding="utf-8"))
    data["decks"]["two.en"]["items"]["one"][1] += 5
    lock.write_text(json.dumps(data), encoding="utf-8")
    planned.clear()
    result = invoke(runner, "build")
    assert planned == ["two"]
    assert "wrote out/two.en.apkg" in result.stdout


def test_an_edit_reads_only_the_items_it_changed(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch, collection: AnkiCollection
) -> None:
    """The other items of the edited bank are taken from its cache entry, at their new
    lines; an entry edited since it was written is not trusted for any item."""
    import ankigen.bank.reader

    items = [item(f"i{n}", question=f"Question {n}?") for n in range(5)]
    write_bank(project / "banks", items=items)
    assert invoke(runner, "build").exit_code == 0
    read: list[str] = []
    real_read = ankigen.bank.reader._read_item

    def counting(r: object, node: object, *rest: object, **named: object) -> object:
        found = real_read(r, node, *rest, **named)  # type: ignore[arg-type]
        read.append(found.id if found else "?")
        return found

    monkeypatch.setattr(ankigen.bank.reader, "_read_item", counting)
    edited = [item("new", question="A new first question?"), *items]
    edited[3] = item("i2", question="Question 2, edited?")
    write_bank(project / "banks", items=edited)
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    assert sorted(read) == ["i2", "new"]
    collection.import_package(project / "out" / "demo.en.apkg")
    assert collection.note_by_item("i2")["Question"] == "Question 2, edited?"
    assert collection.note_by_item("i4")["Question"] == "Question 4?"

    # the same bank, its cache entry's text of an item changed: that item is read again
    [entry] = (project / "out" / ".ankigen-banks").glob("*.json")
    rewrite_entry(entry, lambda h, d: d["bank"]["items"]["question"].__setitem__(5, "Forged?"))
    read.clear()
    edited[0] = item("new", question="The new first question, edited?")
    write_bank(project / "banks", items=edited)
    assert invoke(runner, "build").exit_code == 0
    assert sorted(read) == ["i4", "new"]


def test_an_edit_checks_only_its_items_for_untranslated_text(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The untranslated-text check is the costliest of a bank's own: the items an edit
    did not change keep what it said of them, at their new lines."""
    import ankigen.checks.across
    import ankigen.checks.incremental
    import ankigen.checks.parity
    import ankigen.checks.rules
    import ankigen.checks.run
    import ankigen.checks.translation

    def hindi_item(item_id: str, english: bool = False) -> dict[str, Any]:
        question = (
            f"Which of these choices is the right one for question {item_id}?"
            if english
            else f"प्रश्न {item_id}: इनमें से कौन सा विकल्प सही है?"
        )
        choices = [f"विकल्प {item_id} {n}" for n in range(1, 5)]
        return item(item_id, question=question, explanation="व्याख्या यहाँ है।") | {"choices": choices}

    items = [hindi_item(f"i{n}", english=n % 2 == 1) for n in range(6)]
    write_bank(project / "banks", language="hi", items=items)
    assert "3 warnings in the banks" in invoke(runner, "build").stderr
    judged: list[str] = []
    real = ankigen.checks.translation.untranslated_parts

    def counting(bank: Bank, item: Any, *rest: Any) -> Any:
        judged.append(item.id)
        return real(bank, item, *rest)

    # a bank's own check and the check against its reference each look it up
    monkeypatch.setattr(ankigen.checks.translation, "untranslated_parts", counting)
    monkeypatch.setattr(ankigen.checks.across, "untranslated_parts", counting)
    # a new first item moves every other one; one English question is translated
    items = [hindi_item("new"), *items]
    items[2] = hindi_item("i1")
    write_bank(project / "banks", language="hi", items=items)
    result = invoke(runner, "build")
    assert sorted(judged) == ["i1", "new"]
    assert "2 warnings in the banks" in result.stderr
    lint = invoke(runner, "lint").output
    assert lint.count("untranslated? question in Latin script, not Devanagari") == 2
    assert "banks/demo/hi.yaml:41: warning: item 'i3'" in lint  # at its new line
    # what the build keeps for the next one is what a fresh check finds
    import hashlib

    from ankigen.bank.files import Source
    from ankigen.checks.cache_entry import load

    path = Path("banks/demo/hi.yaml")

    def kept_as_found() -> None:
        data = (project / path).read_bytes()
        source = Source(path, data, hashlib.sha256(data).hexdigest())
        [entry] = (project / "out" / ".ankigen-banks").glob("*.json")
        kept = load(source, entry.read_bytes(), ("en",))[1]
        assert kept == ankigen.checks.rules.load_and_check(source)[1]

    kept_as_found()
    # in another language, the same items are judged again
    (project / path).write_text(
        (project / path).read_text(encoding="utf-8").replace("language: hi", "language: en"),
        encoding="utf-8",
    )
    judged.clear()
    assert invoke(runner, "build").exit_code == 0
    assert len(judged) == 7
    kept_as_found()


def test_a_bank_edited_alone_goes_to_its_deck_as_parsed(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one bank an edit changed is parsed in this process: its deck's job takes it as
    it is, instead of loading it again from the entry just made (but a job sent to a
    worker never carries it)."""
    import pickle

    import ankigen.checks.bankcache
    import ankigen.checks.cache_entry
    from ankigen.builder.jobs import DeckJob

    write_bank(project / "banks", language="en", items=[item("a"), item("b")])
    write_bank(project / "banks", language="de", items=[item("a"), item("b")])
    assert invoke(runner, "build").exit_code == 0
    loaded: list[str] = []
    real_load = ankigen.checks.cache_entry.load

    def counting(source: Any, *rest: Any) -> Any:
        loaded.append(source.digest)
        return real_load(source, *rest)

    # the store and the check in a worker each look it up in their own module

    for module in (ankigen.checks.bankcache, ankigen.checks.cache_entry):
        monkeypatch.setattr(module, "load", counting)
    jobs: list[DeckJob] = []
    real_job = ankigen.builder.jobs.run_deck_job

    def seen(job: DeckJob) -> Any:
        jobs.append(job)
        return real_job(job)

    # the jobs run by the map and a stale plan made again each look it up
    for module in (ankigen.builder.jobs, ankigen.builder.locked):
        monkeypatch.setattr(module, "run_deck_job", seen)
    edited = write_bank(project / "banks", language="de", items=[item("a", 2), item("b")])
    result = invoke(runner, "build")
    assert "wrote out/demo.de.apkg: 2 notes (0 new, 1 changed" in result.output
    new_digest = hashlib.sha256(edited.read_bytes()).hexdigest()
    assert new_digest not in loaded  # only the previous entry, for the items it reuses
    assert loaded, "the patched load sees the previous entry: a load would have been seen"
    [job] = jobs
    assert job.bank is not None and job.bank.items[0].answer == (2,)
    assert pickle.loads(pickle.dumps(job)).bank is None


def test_parities_read_from_the_cache_only_for_banks_not_checked_in_the_build(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bank checked in this build hands its parity over with its entry; only a bank
    whose entry was read is asked for its parity from the entry, and an edited bank for
    the parity of its previous bytes (its unchanged items' rows)."""
    import ankigen.checks.bankcache
    import ankigen.checks.cache_entry

    read: list[str] = []
    real = ankigen.checks.cache_entry.load_parity

    def counting(source: Any, *rest: Any) -> Any:
        read.append(str(source.path))
        return real(source, *rest)

    # the store and the check in a worker each look it up in their own module

    for module in (ankigen.checks.bankcache, ankigen.checks.cache_entry):
        monkeypatch.setattr(module, "load_parity", counting)
    for language in ("en", "de", "fr"):
        write_bank(project / "banks", language=language, items=[item("a"), item("b")])
    assert invoke(runner, "build").exit_code == 0
    assert read == []
    write_bank(project / "banks", language="fr", items=[item("a", 2), item("b")])
    assert invoke(runner, "build").exit_code == 0
    # French was checked in this build, with its previous entry
    assert read == ["banks/demo/fr.yaml", "banks/demo/en.yaml"]


def test_an_edited_translation_alone_is_checked_against_its_reference(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A translation's check against its reference is kept by both banks' bytes: an
    edit to one translation compares it alone, an edit to the reference all of them,
    each in full only where their parities are not in step; what the build counts
    stays what `lint` finds."""
    import ankigen.checks.across
    import ankigen.checks.incremental
    import ankigen.checks.parity
    import ankigen.checks.rules
    import ankigen.checks.run
    import ankigen.checks.translation

    banks = project / "banks"
    words = {
        "de": ("Welche Antwort ist richtig bei {}?", "Die Erklärung für {} steht hier."),
        "fr": ("Quelle réponse est juste pour {} ?", "L'explication pour {} est ici."),
    }

    def bank(language: str, first_answer: int) -> None:
        question, explanation = words.get(language, ("Which answer is right for {}?", "{}."))
        items = [
            item(i, answer, question=question.format(i), explanation=explanation.format(i))
            for i, answer in (("a", first_answer), ("b", 2))
        ]
        write_bank(banks, language=language, items=items)

    bank("en", 1)
    bank("de", 3)  # another answer than in English
    bank("fr", 1)
    assert "1 warning in the banks" in invoke(runner, "build").stderr
    compared: list[str] = []
    real = ankigen.checks.across.against_reference

    def counting(bank: Bank, *rest: Any) -> Iterable[Diagnostic]:
        compared.append(bank.language)
        return real(bank, *rest)

    steps: list[bool] = []
    real_in_step = ankigen.checks.parity.in_step

    def counting_steps(*parities: Parity) -> bool:
        steps.append(real_in_step(*parities))
        return steps[-1]

    monkeypatch.setattr(ankigen.checks.across, "against_reference", counting)
    monkeypatch.setattr(ankigen.checks.across, "in_step", counting_steps)
    bank("fr", 4)
    assert "2 warnings in the banks" in invoke(runner, "build").stderr
    assert compared == ["fr"] and steps == [False]
    assert "0 errors, 2 warnings in 3 banks" in invoke(runner, "lint").output
    compared.clear()
    steps.clear()
    bank("en", 4)
    assert "1 warning in the banks" in invoke(runner, "build").stderr  # now German is out
    assert compared == ["de"]  # French is in step: its parity says so, unread
    assert sorted(steps) == [False, True]


def test_the_bank_cache_round_trips_every_shipped_bank() -> None:
    import hashlib

    from ankigen.bank.files import Source
    from ankigen.bank.reader import load_bank
    from ankigen.checks.cache_entry import dump, load

    for path in sorted((REPO / "banks").rglob("*.yaml")):
        bank, problems = load_bank(path)
        assert bank is not None
        data = path.read_bytes()
        source = Source(path, data, hashlib.sha256(data).hexdigest())
        copy, copied_problems = load(source, dump(source, (bank, problems), ("en",)), ("en",))
        assert copy == bank and copied_problems == problems
        assert copy is not None and copy.lines == bank.lines
        assert [i.lines for i in copy.items] == [i.lines for i in bank.items]


def test_an_edited_bank_takes_its_unchanged_items_parity_rows_as_they_were(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only the edited item's texts are digested again: the rest are known by seal."""
    import ankigen.checks.across
    import ankigen.checks.incremental
    import ankigen.checks.parity
    import ankigen.checks.rules
    import ankigen.checks.run
    import ankigen.checks.translation
    from ankigen.bank.reader import parse_bank
    from ankigen.checks.parity import parity
    from ankigen.checks.rules import Before

    def bank_text(second: str) -> bytes:
        lines = ["topic: demo", "language: en", "title: Demo", "items:"]
        for item_id, question in (("one", "First?"), ("two", second), ("three", "Third?")):
            lines += [
                f"  - id: {item_id}",
                f'    question: "{question}"',
                '    choices: ["a", "b"]',
                "    answer: 1",
                '    explanation: "Because."',
            ]
        return ("\n".join(lines) + "\n").encode()

    old, _ = parse_bank("en.yaml", bank_text("Second?"))
    assert old is not None
    before = Before.of(old, [], parity(old))
    new, _ = parse_bank("en.yaml", bank_text("Second, edited?"), old.items)
    assert new is not None
    digested: list[str] = []
    real = ankigen.checks.parity._digest
    monkeypatch.setattr(
        ankigen.checks.parity, "_digest", lambda text: digested.append(text) or real(text)
    )
    assert parity(new, before.parity) == parity(new)
    assert digested[:2] == ["second, edited?", "because."]
    assert len(digested) == 2 + 6  # then all three items again, without `known`
