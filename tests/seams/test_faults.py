"""Faults on every command that writes a user's file, as `tests/builder/test_faults.py` does for `build`:
SIGKILL or Ctrl-C at any moment leaves each file of the project exactly as it was before
the command or exactly as an uninterrupted run leaves it, never a part of it.

The signals are real ones, to a real `python -m ankigen`, at two kinds of moments:

- random: a delay drawn from the span of an uninterrupted run of the same command; most
  land in Python's start-up and the reading, some in the writing;
- chosen: the command sends the signal to itself at each point where a file changes
  (just after each temporary file is made, just before and just after each rename), so
  every such point is hit on every run, however fast or slow the machine. Killed just
  before a rename, nothing of its file has changed; just after, the file is whole: the
  rename is the commit point, and nothing else changes a file.

Files are compared byte for byte with a snapshot of the project before the command and
one after an uninterrupted run. Under SIGKILL a temporary file (`.ankigen-tmp-*`, hidden,
so never a bank) may stay behind; the next run leaves it alone and is not misled by it.
Under Ctrl-C none stays, and a command that writes several files (an import with its
images, a pull into two banks) leaves all of them old or all of them new.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polib
import pytest
from anki.collection import ExportAnkiPackageOptions
from PIL import Image

from tests.helpers import SRC, AnkiCollection, item, write_bank

WAIT = 120  # seconds before a command is taken to hang: subprocess.TimeoutExpired says so
TEMP = ".ankigen-tmp-"
TRIALS = 2  # random moments per command and signal
POINTS = ("made", "before", "after")


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]


CASES = (
    # a new bank and its image
    Case("import", ("import", "quiz.xml", "--topic", "g", "--lang", "en", "-o", "banks/g/en.yaml")),
    Case(
        "import-force",
        ("import", "t3.gift", "--topic", "g", "--lang", "en", "-o", "old.yaml", "--force"),
    ),
    Case("translate-po", ("translate", "t3", "--to", "de", "--po", "de.po")),
    Case("import-po", ("import", "fr.po")),
    Case("pull", ("pull", "edited.apkg")),  # into two banks
    Case("export", ("export", "banks/t3/en.yaml", "--to", "gift", "-o", "t3.gift")),
)

# The command, with a hook on the calls that change files, each noted in FAULT_LOG, as
# is the moment ankigen's entry point starts: at FAULT_AT ("made:1", "before:2",
# "after:2": the first temporary file made, just before and just after the second
# rename) the process sends itself FAULT_SIGNAL.
HOOKED = """
import os, signal, sys, tempfile
point, _, nth = os.environ.get("FAULT_AT", "none:0").partition(":")
counts = {"started": 0, "made": 0, "before": 0, "after": 0}

def reached(name):
    counts[name] += 1
    with open(os.environ["FAULT_LOG"], "a") as log:
        log.write(name + "\\n")
    if name == point and counts[name] == int(nth):
        os.kill(os.getpid(), getattr(signal, os.environ["FAULT_SIGNAL"]))

real_mkstemp, real_replace = tempfile.mkstemp, os.replace

def mkstemp(*args, **kwargs):
    made = real_mkstemp(*args, **kwargs)
    reached("made")
    return made

def replace(*args, **kwargs):
    reached("before")
    real_replace(*args, **kwargs)
    reached("after")

tempfile.mkstemp, os.replace = mkstemp, replace
sys.argv = ["ankigen", *sys.argv[1:]]
import ankigen.cli.entry as entry
# "started" once main's `try` is entered, from its first call: a signal sent after it
# is ankigen's to handle, never the harness's (a line between the two is not)
real_ends = entry.ends_without_teardown

def ends_without_teardown():
    real_ends()
    reached("started")

entry.ends_without_teardown = ends_without_teardown
entry.main()
"""

Snapshot = dict[str, bytes]


def start(
    project: Path, args: tuple[str, ...], hook: dict[str, str] | None
) -> subprocess.Popen[bytes]:
    """`python -m ankigen ARGS`; with `hook`, the same through HOOKED."""
    command = [sys.executable, *(("-m", "ankigen") if hook is None else ("-c", HOOKED))]
    env = dict(os.environ, PYTHONPATH=str(SRC), SOURCE_DATE_EPOCH="1700000000", **(hook or {}))
    return subprocess.Popen(
        [*command, *args], cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def run(project: Path, *args: str) -> None:
    command = start(project, args, None)
    _, stderr = command.communicate(timeout=WAIT)
    assert command.returncode == 0, stderr.decode()


def snapshot(project: Path) -> Snapshot:
    return {
        path.relative_to(project).as_posix(): path.read_bytes()
        for path in sorted(project.rglob("*"))
        if path.is_file()
    }


def temporaries(files: Snapshot) -> list[str]:
    return [name for name in files if Path(name).name.startswith(TEMP)]


def without_temporaries(files: Snapshot) -> Snapshot:
    return {name: data for name, data in files.items() if not Path(name).name.startswith(TEMP)}


def changed(files: Snapshot, before: Snapshot) -> set[str]:
    return {name for name in set(files) | set(before) if files.get(name) != before.get(name)}


def bank_items(prefix: str, version: str, count: int = 150) -> list[dict[str, object]]:
    return [item(f"{prefix}{n}", explanation=f"{version} explanation {n}.") for n in range(count)]


def make_project(project: Path, anki: Path) -> None:
    """One project where each command of CASES has something to write."""
    banks = project / "banks"
    for topic in ("t0", "t1", "t3"):
        write_bank(banks, topic, items=bank_items(topic, "first"))
    write_bank(banks, "t2", items=[item("red", image="red.png"), *bank_items("t2", "first")])
    (project / "media").mkdir()
    Image.new("RGB", (40, 30), (200, 30, 30)).save(project / "media" / "red.png")
    # a quiz with an image to import, and a file an import with --force replaces
    run(project, "export", "banks/t2/en.yaml", "--to", "moodle-xml", "-o", "quiz.xml")
    (project / "old.yaml").write_text("# a bank of another time\n", encoding="utf-8")
    # a translation and its PO file, translated in part: `import fr.po` writes it back
    run(project, "translate", "t2", "--to", "fr")
    run(project, "translate", "t2", "--to", "fr", "--po", "fr.po")
    po = polib.pofile(str(project / "fr.po"), wrapwidth=0)
    for entry in po[: len(po) // 2]:
        entry.msgstr = f"traduit : {entry.msgid}"
    po.save(str(project / "fr.po"))
    # a PO file and an export of t3 before an edit: merged into, and replaced (and the
    # export, imported with --force)
    run(project, "translate", "t3", "--to", "de", "--po", "de.po")
    po = polib.pofile(str(project / "de.po"), wrapwidth=0)
    for entry in po[:10]:
        entry.msgstr = f"übersetzt: {entry.msgid}"
    po.save(str(project / "de.po"))
    run(project, "export", "banks/t3/en.yaml", "--to", "gift", "-o", "t3.gift")
    write_bank(banks, "t3", items=bank_items("t3", "second", 170))
    # a note of each of two decks edited in Anki: `pull` writes both banks
    run(project, "build")
    collection = AnkiCollection(anki)
    try:
        for topic in ("t0", "t1"):
            collection.import_package(project / "out" / f"{topic}.en.apkg")
            note = collection.note_by_item(f"{topic}7")
            note["Explanation"] = f"Fixed in Anki: {topic}."
            collection.col.update_note(note)
        options = ExportAnkiPackageOptions(
            with_scheduling=False, with_deck_configs=False, with_media=False, legacy=False
        )
        collection.col.export_anki_package(
            out_path=str(project / "edited.apkg"), options=options, limit=None
        )
    finally:
        collection.close()


@dataclass(frozen=True)
class After:
    """A command's uninterrupted run: the project after it, how long it took, and how
    many times it reached each point of HOOKED."""

    files: Snapshot
    duration: float
    points: dict[str, int]


@dataclass(frozen=True)
class Outcome:
    status: int
    stderr: str
    files: Snapshot = field(repr=False)
    ran: float
    """Seconds from the start of ankigen's entry point to the end of the process."""


@dataclass(frozen=True)
class World:
    template: Path
    before: Snapshot
    project: Path
    """Where every run happens, the template copied afresh: always the same path, as
    some files name others."""
    log: Path
    afters: dict[str, After] = field(default_factory=dict)

    def reset(self) -> Path:
        shutil.rmtree(self.project, ignore_errors=True)
        shutil.copytree(self.template, self.project, symlinks=True)
        self.log.write_text("")
        return self.project

    def run(
        self, case: Case, hook: dict[str, str], signal_at: tuple[int, float] | None = None
    ) -> Outcome:
        """`case`'s command in the project as it is, through HOOKED; `signal_at` sends a
        signal that many seconds after ankigen's entry point started."""
        command = start(self.project, case.args, {**hook, "FAULT_LOG": str(self.log)})
        started = self.started(command)
        if signal_at is not None:
            sent, delay = signal_at
            time.sleep(delay)  # chooses the moment; the wait below is what synchronizes
            command.send_signal(sent)
        _, stderr = command.communicate(timeout=WAIT)
        ran = time.monotonic() - started
        return Outcome(command.returncode, stderr.decode(), snapshot(self.project), ran)

    def started(self, command: subprocess.Popen[bytes]) -> float:
        """When ankigen's entry point started, or the process ended before: a Ctrl-C in
        Python's own start-up, before any line of ankigen runs, is Python's (its
        traceback, nothing written), and no moment of this test falls there."""
        deadline = time.monotonic() + WAIT
        while "started" not in self.log.read_text() and command.poll() is None:
            assert time.monotonic() < deadline, "the command did not start"
            time.sleep(0.002)
        return time.monotonic()

    def after(self, case: Case) -> After:
        if case.name not in self.afters:
            self.reset()
            done = self.run(case, {})
            assert done.status == 0, done.stderr
            assert changed(done.files, self.before), f"{case.name} changed nothing"
            assert not temporaries(done.files)
            points = self.log.read_text().split()
            counts = {point: points.count(point) for point in POINTS}
            self.afters[case.name] = After(done.files, done.ran, counts)
        return self.afters[case.name]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("faults")
    template = root / "template"
    make_project(template, root / "anki")
    yield World(template, snapshot(template), root / "project", root / "points.log")


def assert_each_file_old_or_new(outcome: Outcome, before: Snapshot, new: Snapshot) -> None:
    files = without_temporaries(outcome.files)
    for name in set(files) | set(before) | set(new):
        assert files.get(name) in (before.get(name), new.get(name)), (
            f"{name} is neither as it was nor as the command writes it"
        )


def assert_a_clean_ctrl_c(outcome: Outcome, before: Snapshot, new: Snapshot) -> None:
    assert outcome.status in (0, 130), outcome
    assert "Traceback" not in outcome.stderr, outcome.stderr
    if outcome.status == 130:
        assert outcome.stderr.splitlines()[-1] == "interrupted", outcome.stderr
    assert not temporaries(outcome.files)
    # several files: all of them or none
    assert outcome.files in (before, new), sorted(changed(outcome.files, before))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_signal_at_a_random_moment_leaves_each_file_old_or_new(world: World, case: Case) -> None:
    after = world.after(case)
    rng = random.Random(case.name)
    for sent in (signal.SIGKILL, signal.SIGINT):
        for _ in range(TRIALS):
            world.reset()
            outcome = world.run(case, {}, (sent, rng.uniform(0, 1.05) * after.duration))
            assert_each_file_old_or_new(outcome, world.before, after.files)
            if sent == signal.SIGINT:
                assert_a_clean_ctrl_c(outcome, world.before, after.files)
            elif outcome.status == 0:
                assert outcome.files == after.files
            else:
                assert outcome.status == -signal.SIGKILL, outcome


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sigkill_around_each_rename_shows_it_is_the_commit_point(world: World, case: Case) -> None:
    after = world.after(case)
    renames = after.points["before"]
    assert renames >= 1
    states = []
    for point, nth in [*(("before", n) for n in range(1, renames + 1)), ("after", renames)]:
        world.reset()
        outcome = world.run(case, {"FAULT_AT": f"{point}:{nth}", "FAULT_SIGNAL": "SIGKILL"})
        assert outcome.status == -signal.SIGKILL, outcome
        assert_each_file_old_or_new(outcome, world.before, after.files)
        states.append(without_temporaries(outcome.files))
        if (point, nth) == ("before", renames):
            # what SIGKILL leaves behind: hidden, named as ankigen's; the next run is not
            # misled by it (nor removes it: it may be another run's, still writing), and
            # finishes what was begun (two files: one written, one not)
            leftovers = temporaries(outcome.files)
            assert leftovers
            files = world.run(case, {}).files
            assert without_temporaries(files) == after.files
            assert temporaries(files) == leftovers
    # nothing changed before the first rename, each one changed one file, whole (the
    # next rename's state holds it as the uninterrupted run left it), and nothing else
    assert states[0] == world.before and states[-1] == after.files
    assert all(len(changed(a, b)) == 1 for a, b in zip(states[1:], states, strict=False))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_ctrl_c_where_a_file_changes_is_all_or_nothing(world: World, case: Case) -> None:
    after = world.after(case)
    # just after a rename is just before the next one; after the last, all is written
    for point in ("made", "before"):
        for nth in range(1, after.points[point] + 1):
            world.reset()
            outcome = world.run(case, {"FAULT_AT": f"{point}:{nth}", "FAULT_SIGNAL": "SIGINT"})
            assert outcome.status == 130, (point, nth, outcome)
            assert_a_clean_ctrl_c(outcome, world.before, after.files)
