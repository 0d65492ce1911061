"""Every command that writes what another reads, run together in random order on one
project: `translate` (new, `--update`, `--po`), edits to the reference and to its
translation, a translator's edits to the PO file, `import FILE.po` (into the bank and
into a new file with `-o`), `build` into a learner's real Anki collection, edits made in
Anki's editor and `pull`.

After every step: no text an author or a translator wrote is lost, or replaced by an
older one, without a warning naming it; no other bank changes; every bank loads; every
package imports into the real backend with the learner's cards and reviews kept.

Each text carries the time of the person's write that made it (a step counter), so
"older" is the order in which people wrote, not what any command recorded.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import polib
from anki.collection import ExportAnkiPackageOptions
from click.testing import CliRunner
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from ankigen.bank.reader import load_bank
from ankigen.bank.texts import bank_contexts, replace_texts
from tests.helpers import AnkiCollection

REFERENCE = """\
# the reference: comments and layout are the author's
topic: demo
language: en
title: "Ring quiz"
items:
  - id: ring
    question: "Which collective sums across ranks?"
    choices:
      - text: "all-reduce"
        why: "It sums and gives every rank the result."
      - "broadcast"
      - "scatter"
    answer: 1
    explanation: "All-reduce is reduce-scatter then all-gather."
  - id: tree
    question: "How many steps does a tree broadcast take on eight ranks?"
    choices: ["3", "7", "8"]
    answer: 1
    explanation: |
      log2 of eight:
      three rounds.
"""
BYSTANDER = """\
topic: other
language: en
title: "Another topic"
items:
  - id: alone
    question: "Which rank holds the result of reduce?"
    choices: ["the root", "every rank"]
    answer: 1
    explanation: "Only the destination rank."
"""
WORDS = ["rank", "ring", "Summe", "alle", "Gradient", "shard", "zwei", "Schritt", "tensor"]
texts = st.builds(
    lambda lines: "\n".join(" ".join(words) for words in lines),
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1, max_size=2),
)
# the texts Anki's editor and pull carry as they are: one line, no markup
plain = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


def contexts_of(path: Path) -> dict[str, str]:
    bank, problems = load_bank(path)
    assert bank is not None, problems
    assert not [p for p in problems if p.severity == "error"], problems
    return bank_contexts(bank)


def set_texts(path: Path, wanted: dict[str, str]) -> None:
    """An author's edit in their editor: the texts changed where they stand."""
    text, _ = replace_texts(path.read_text(encoding="utf-8"), str(path), wanted)
    path.write_text(text, encoding="utf-8")


class Seams(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="seams-"))
        self.was = Path.cwd()
        os.chdir(self.root)
        self.runner = CliRunner()
        self.banks = self.root / "banks"
        self.reference = self.banks / "demo" / "en.yaml"
        self.translation = self.banks / "demo" / "de.yaml"
        self.bystander = self.banks / "other" / "en.yaml"
        self.po = self.root / "de.po"
        self.clock = 0
        self.epoch = int(time.time())
        self.written: dict[str, int] = {}
        """When each text of the translation was first written, by whom it does not matter
        (a text written again as it was keeps its first time)."""
        self.first: dict[tuple[str, str], int] = {}
        self.po_written: dict[str, int] = {}
        """When each msgstr of the PO file was written."""
        self.added = 0
        self.copies = 0
        self.collection: AnkiCollection | None = None
        self.reviews = 0
        self.cards: list[int] = []
        self.in_anki: dict[tuple[Path, str], tuple[str, int]] = {}
        """Texts changed in Anki's editor and not pulled yet, with their times."""

    def teardown(self) -> None:
        if self.collection is not None:
            self.collection.close()
        os.chdir(self.was)
        shutil.rmtree(self.root, ignore_errors=True)

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def stamp(self, context: str, text: str, now: int) -> int:
        return self.first.setdefault((context, text), now)

    def unique(self, text: str) -> str:
        """Every edit's text is new: two choices an author made the same would be a
        problem of the bank's, not of the seams."""
        return f"{text} {self.tick()}"

    @initialize()
    def project(self) -> None:
        for path, text in ((self.reference, REFERENCE), (self.bystander, BYSTANDER)):
            path.parent.mkdir(parents=True)
            path.write_text(text, encoding="utf-8")
        self.bystander_bytes = self.bystander.read_bytes()

    def banks_now(self) -> dict[Path, bytes]:
        return {path: path.read_bytes() for path in sorted(self.banks.rglob("*.yaml"))}

    def run(self, *args: str) -> str:
        # each build a little later than the last and than any edit made in Anki before it,
        # whatever this machine's speed: which notes Anki's import updates is then the same
        # on every run, and so is every draw that follows
        env = {"SOURCE_DATE_EPOCH": str(self.epoch + 100 * self.clock)}
        result = self.runner.invoke(_cli(), list(args), catch_exceptions=False, env=env)
        assert "Traceback" not in result.output, result.output
        assert result.exit_code in (0, 1), result.output
        self.last_exit = result.exit_code
        return result.output

    # ---- the translation, started and updated

    @precondition(lambda self: not self.translation.exists())
    @rule()
    def translate(self) -> None:
        before = self.banks_now()
        output = self.run("translate", "demo", "--to", "de")
        assert self.last_exit == 0, output
        now = self.tick()
        self.written = {c: self.stamp(c, t, now) for c, t in contexts_of(self.translation).items()}
        assert {p: b for p, b in self.banks_now().items() if p != self.translation} == before

    @precondition(lambda self: self.translation.exists())
    @rule()
    def translate_update(self) -> None:
        before, texts_before = self.banks_now(), contexts_of(self.translation)
        output = self.run("translate", "demo", "--to", "de", "--update")
        assert self.last_exit == 0, output
        after = contexts_of(self.translation)
        # only the items the reference added since: not one text of the translation moved
        assert {c: t for c, t in after.items() if c in texts_before} == texts_before
        now, reference = self.tick(), contexts_of(self.reference)
        for context in after.keys() - texts_before.keys():
            # a copy of the reference's text is nobody's translation: a PO file made before
            # it was copied recorded that same text, so its translation is newer
            copied = after[context] == reference.get(context)
            self.written[context] = 0 if copied else self.stamp(context, after[context], now)
        assert {p: b for p, b in self.banks_now().items() if p != self.translation} == {
            p: b for p, b in before.items() if p != self.translation
        }

    # ---- authors' and translators' edits

    @rule(data=st.data(), text=texts)
    def edit_reference(self, data: st.DataObject, text: str) -> None:
        context = data.draw(st.sampled_from(sorted(contexts_of(self.reference))))
        set_texts(self.reference, {context: self.unique(text)})

    @rule()
    def add_reference_item(self) -> None:
        self.added += 1
        with self.reference.open("a", encoding="utf-8") as file:
            file.write(
                f"  - id: added-{self.added}\n"
                f'    question: "Added question {self.added}?"\n'
                '    choices: ["yes", "no"]\n'
                "    answer: 1\n"
                '    explanation: "Added."\n'
            )
        self.tick()

    @precondition(lambda self: self.translation.exists())
    @rule(data=st.data(), text=texts)
    def edit_translation(self, data: st.DataObject, text: str) -> None:
        context = data.draw(st.sampled_from(sorted(contexts_of(self.translation))))
        text = self.unique(text)
        set_texts(self.translation, {context: text})
        self.written[context] = self.stamp(context, text, self.clock)

    @precondition(lambda self: self.translation.exists())
    @rule()
    def export_po(self) -> None:
        old = polib.pofile(str(self.po)) if self.po.exists() else None
        before = self.banks_now()
        output = self.run("translate", "demo", "--to", "de", "--po", str(self.po))
        assert self.last_exit == 0, output
        assert self.banks_now() == before
        po = polib.pofile(str(self.po))
        kept = {e.msgctxt: e.msgstr for e in old or [] if e.msgstr and not e.obsolete}
        times = {}
        for entry in po:
            if entry.obsolete or not entry.msgstr:
                continue
            if kept.get(entry.msgctxt) == entry.msgstr:  # merged: the translator's text
                times[entry.msgctxt] = self.po_written[entry.msgctxt]
            else:  # the bank's text, as it was written
                times[entry.msgctxt] = self.written[entry.msgctxt]
        self.po_written = times

    @precondition(lambda self: self.po.exists())
    @rule(data=st.data(), text=texts)
    def translate_in_po(self, data: st.DataObject, text: str) -> None:
        po = polib.pofile(str(self.po), wrapwidth=0)
        live = [e for e in po if not e.obsolete]
        entry = data.draw(st.sampled_from(live))
        entry.msgstr = self.unique(text)
        if "fuzzy" in entry.flags:  # reviewed
            entry.flags.remove("fuzzy")
        po.save(str(self.po))
        self.po_written[entry.msgctxt] = self.stamp(entry.msgctxt, entry.msgstr, self.clock)

    # ---- the PO file back

    def offered(self) -> dict[str, str]:
        """What the PO file offers: its non-fuzzy translations of texts the reference has."""
        known = contexts_of(self.reference)
        return {
            e.msgctxt: e.msgstr
            for e in polib.pofile(str(self.po))
            if e.msgstr and not e.obsolete and "fuzzy" not in e.flags and e.msgctxt in known
        }

    @precondition(lambda self: self.po.exists() and self.translation.exists())
    @rule()
    def import_po(self) -> None:
        before_files, before = self.banks_now(), contexts_of(self.translation)
        offered = self.offered()
        output = self.run("import", str(self.po))
        assert self.last_exit == 0, output
        after = contexts_of(self.translation)
        now = self.tick()
        for context, text in after.items():
            if context not in before:  # an item the reference added, brought in
                self.written[context] = self.stamp(context, text, now)
                continue
            was, po_text = before[context], offered.get(context)
            assert text in (was, po_text), (context, was, po_text, text)
            if text == was and po_text is not None and po_text != was:
                # the PO file's text was not taken: a warning says which
                assert f"'{context}'" in output, (context, output)
            if text != was:
                # a translator's newer text, or a warning that an older one replaced it
                newer = self.po_written[context] > self.written[context]
                assert newer or f"'{context}'" in output, (context, output)
                self.written[context] = self.po_written[context]
        changed = {p for p, b in self.banks_now().items() if before_files.get(p) != b}
        assert changed <= {self.translation}

    @precondition(lambda self: self.po.exists())
    @rule()
    def import_po_into_a_new_file(self) -> None:
        self.copies += 1
        copy = self.root / f"copy-{self.copies}.yaml"
        before, offered = self.banks_now(), self.offered()
        output = self.run("import", str(self.po), "-o", str(copy))
        assert self.last_exit == 0, output
        # a new file has no newer text to keep: the only warning says the reference moved on
        warnings = [line for line in output.splitlines() if ": warning: " in line]
        assert all("the reference text changed" in line for line in warnings), output
        texts = contexts_of(copy)
        reference = contexts_of(self.reference)
        assert texts == {c: offered.get(c, text) for c, text in reference.items()}
        assert self.banks_now() == before

    # ---- learners

    @rule()
    def build(self) -> None:
        output = self.run("build")
        assert self.last_exit == 0, output
        if self.collection is None:
            self.collection = AnkiCollection(self.root / "anki")
        collection = self.collection
        for package in sorted((self.root / "out").glob("*.apkg")):
            log = collection.import_package(package)
            assert log.counts()["conflicting"] == 0
        items = sum(len(load_bank(p)[0].items) for p in self.banks.rglob("*.yaml"))  # type: ignore[union-attr]
        assert len(collection.col.find_notes("")) == items
        # every card reviewed before is still there, with its reviews
        cards = sorted(collection.col.find_cards(""))
        assert set(self.cards) <= set(cards) and collection.revlog_count() == self.reviews
        self.reviews += collection.review_all()
        self.cards = sorted(collection.col.find_cards(""))
        # a newer build's note replaces an edit made in Anki, as Anki's import does
        fields = {"question": "Question", "explanation": "Explanation"}
        notes = {(n["Language"], n["ItemId"]): n for n in collection.notes()}
        for (bank, context), (text, _) in list(self.in_anki.items()):
            item, part = context.split("|")
            language = "de" if bank == self.translation else "en"
            if notes[(language, item)][fields[part]] != text:
                del self.in_anki[(bank, context)]

    def bank_of(self, language: str, item_id: str) -> Path:
        if language == "de":
            return self.translation
        return self.bystander if item_id == "alone" else self.reference

    @precondition(lambda self: self.collection is not None)
    @rule(data=st.data(), text=plain)
    def fix_in_anki(self, data: st.DataObject, text: str) -> None:
        assert self.collection is not None
        notes = {(n["Language"], n["ItemId"]): n for n in self.collection.notes()}
        # drawn by what the note is, not by its id: Anki's ids are times
        note = notes[data.draw(st.sampled_from(sorted(notes)))]
        field = data.draw(st.sampled_from(["Question", "Explanation"]))
        note[field] = self.unique(text)
        self.collection.col.update_note(note)
        bank = self.bank_of(note["Language"], note["ItemId"])
        self.in_anki[(bank, f"{note['ItemId']}|{field.lower()}")] = (note[field], self.clock)

    @precondition(lambda self: self.collection is not None)
    @rule(take=st.sampled_from([(), ("--take", "anki")]))
    def pull(self, take: tuple[str, ...]) -> None:
        assert self.collection is not None
        package = self.root / "edited.apkg"
        options = ExportAnkiPackageOptions(
            with_scheduling=False, with_deck_configs=False, with_media=False, legacy=False
        )
        self.collection.col.export_anki_package(out_path=str(package), options=options, limit=None)
        before_files = self.banks_now()
        before = {bank: contexts_of(bank) for bank in before_files}
        output = self.run("pull", str(package), *take)
        for bank, texts_before in before.items():
            after = contexts_of(bank)
            for context, was in texts_before.items():
                edit = self.in_anki.get((bank, context))
                if after[context] == was:
                    if edit is not None and edit[0] != was:
                        # Anki's fix was not taken: a conflict names its item, or another
                        # conflict kept every bank as it was
                        item = context.split("|")[0]
                        assert f"item '{item}'" in output or "nothing was written" in output
                    continue
                # only a text someone changed in Anki's editor is ever written, as Anki has it
                assert edit is not None, (bank, context, was, after[context], output)
                assert after[context] == edit[0], (context, edit, after[context], output)
                del self.in_anki[(bank, context)]
                if bank == self.translation:
                    self.written[context] = self.stamp(context, edit[0], edit[1])
        if self.bystander.read_bytes() != self.bystander_bytes:
            self.bystander_bytes = self.bystander.read_bytes()

    @invariant()
    def other_topics_untouched(self) -> None:
        if hasattr(self, "bystander_bytes"):
            assert self.bystander.read_bytes() == self.bystander_bytes


def _cli():  # type: ignore[no-untyped-def]
    from ankigen.cli.app import cli

    return cli


Seams.TestCase.settings = settings(
    # about a minute; ANKIGEN_SEAMS_EXAMPLES=150 explores for five (docs/development.md)
    max_examples=int(os.environ.get("ANKIGEN_SEAMS_EXAMPLES", "25")),
    stateful_step_count=int(os.environ.get("ANKIGEN_SEAMS_STEPS", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


TestSeams = Seams.TestCase
