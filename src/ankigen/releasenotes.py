"""`ankigen release-notes`: what changed for learners since a git revision, in Markdown.

The banks, lock file and project file at the revision are read with `git
show`; the working tree's are read from disk. Run it after `ankigen build`, so
the lock holds the new versions.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ankigen.apkg.note import note_content
from ankigen.bank.files import is_utf8_name
from ankigen.bank.folder import LOCK_NAME, PROJECT_NAME, looks_like_bank
from ankigen.bank.model import IMAGE_FIELDS, Bank, Item
from ankigen.bank.project import Project, load_project, parse_project
from ankigen.bank.reader import parse_bank
from ankigen.bank.workspace import find_bank_paths
from ankigen.checks.run import check_paths
from ankigen.core.errors import AnkigenError, Diagnostic, InvalidBanks, LockError
from ankigen.core.userfile import STDOUT, Target, write
from ankigen.identity.lockfile import Lock, read_lock
from ankigen.identity.versions import lock_version
from ankigen.text.html import plain_text
from ankigen.text.l10n import heading


class ReleaseNotesError(AnkigenError):
    """The revision cannot be read from git."""


@dataclass(frozen=True)
class Snapshot:
    """Banks, lock and project at one point: a git revision or the working tree."""

    banks: dict[str, Bank]
    lock: Lock
    project: Project


GIT_WAIT = 120
"""Seconds git may take to answer (a repository on a network share that hangs)."""


def _git(root: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, check=False, timeout=GIT_WAIT
        )
    except FileNotFoundError:
        raise ReleaseNotesError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise ReleaseNotesError(f"git {' '.join(args)}: no answer within {GIT_WAIT} s") from None
    if done.returncode != 0:
        # git's whole message, on one line: its last line alone may be only the command
        # that helps ("git config --global --add safe.directory ...") without the problem
        said = done.stderr.decode("utf-8", "replace").split()
        raise ReleaseNotesError(f"git {' '.join(args)}: {' '.join(said) or 'failed'}")
    return done.stdout


def repository_place(banks_dir: Path) -> tuple[Path, PurePosixPath]:
    """The repository the banks folder is in, and the folder's path inside it."""
    top = Path(_git(banks_dir, "rev-parse", "--show-toplevel").decode().strip())
    return top, PurePosixPath(banks_dir.resolve().relative_to(top.resolve()).as_posix())


def at_revision(
    banks_dir: Path, ref: str, place: tuple[Path, PurePosixPath] | None = None
) -> Snapshot:
    """The banks folder as it was at `ref`: its banks found by the build's own rule
    (`bank.files.looks_like_bank`, hidden files and folders skipped). `place`: its
    `repository_place`, if known."""
    top, inside = place or repository_place(banks_dir)
    try:
        _git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except ReleaseNotesError:
        raise ReleaseNotesError(
            f"--since {ref!r}: no such revision (tag, branch or commit) in {top}"
        ) from None
    names = _git(top, "ls-tree", "-r", "-z", "--name-only", ref, "--", str(inside)).split(b"\0")
    banks: dict[str, Bank] = {}
    lock = Lock()
    project = Project()
    problems: list[Diagnostic] = []
    for raw in filter(None, names):
        name = raw.decode("utf-8", "surrogateescape")
        shown = f"{ref}:{name}".encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        relative = PurePosixPath(name).relative_to(inside)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if str(relative) in (LOCK_NAME, PROJECT_NAME):
            data = _git(top, "show", f"{ref}:{name}")
            if str(relative) == LOCK_NAME:
                lock = _lock_from_bytes(data, shown)
            else:
                project, found = parse_project(shown, data, banks_dir)
                problems += found
        elif looks_like_bank(relative.name):
            if not is_utf8_name(name):
                problems.append(
                    Diagnostic(shown, 0, "error", "the file name is not valid UTF-8; rename it")
                )
                continue
            bank, found = parse_bank(shown, _git(top, "show", f"{ref}:{name}"))
            if bank is None:
                problems += found
            else:
                banks[bank.key] = bank
    if any(d.severity == "error" for d in problems):
        raise InvalidBanks(problems)
    return Snapshot({k: project.apply(b) for k, b in banks.items()}, lock, project)


def mark(inside: PurePosixPath) -> str:
    """The first line of the notes: says which banks they are of, so that notes written
    again from the same banks may replace them (`userfile.Target.ours`). The folder is
    named as in the repository (`repository_place`), the same in every clone."""
    return f"<!-- release notes of {inside}/, written by ankigen release-notes -->"


def _lock_from_bytes(data: bytes, shown: str) -> Lock:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / LOCK_NAME
        path.write_bytes(data)
        try:
            return read_lock(path)
        except LockError as exc:
            raise ReleaseNotesError(str(exc.message).replace(str(path), shown)) from None


def working_tree(banks_dir: Path, paths: Sequence[Path]) -> Snapshot:
    project, problems = load_project(banks_dir)
    checked = check_paths(paths, reference=project.reference)
    if checked.errors or problems:
        raise InvalidBanks([*problems, *checked.diagnostics])
    banks = {b.key: project.apply(b) for b in checked.banks}
    return Snapshot(banks, read_lock(banks_dir / LOCK_NAME), project)


def changed(before: Bank, was: Item, bank: Bank, item: Item, old: Lock, new: Lock) -> bool:
    """Whether learners see an item changed: the build's own rule, its note's content
    (`apkg.note.note_content`: every field, a why, recall, the images' names, the tags), and
    what each build issued for it (an image's content, which only a build reads)."""
    ours = note_content(bank, item, {k: getattr(item, k) for k in IMAGE_FIELDS}).hash
    theirs = note_content(before, was, {k: getattr(was, k) for k in IMAGE_FIELDS}).hash
    if ours != theirs:
        return True
    old_deck, new_deck = old.decks.get(before.key), new.decks.get(bank.key)
    was_issued = old_deck.items.get(was.id) if old_deck else None
    now_issued = new_deck.items.get(item.id) if new_deck else None
    return was_issued is not None and now_issued is not None and was_issued.hash != now_issued.hash


def _quote(text: str) -> str:
    return " ".join(plain_text(text).split()).replace("|", "\\|")


def release_notes(old: Snapshot, new: Snapshot, ref: str, first_line: str = "") -> str:
    """Markdown: one section per deck that exists now or existed at `ref`."""
    templates_changed = (
        old.lock.notetype is not None
        and new.lock.notetype is not None
        and old.lock.notetype.hash != new.lock.notetype.hash
    )
    out: list[str] = [first_line, ""] if first_line else []
    out += [f"# Release notes since {ref}", ""]
    unchanged: list[str] = []
    for key in sorted(set(old.banks) | set(new.banks)):
        bank = new.banks.get(key)
        before = old.banks.get(key)
        section = _deck_section(key, before, bank, old, new, ref, templates_changed)
        if section is None:
            assert bank is not None
            lock = new.lock.decks.get(key)
            version = f": `{lock_version(bank.topic, bank.language, lock)}`" if lock else ""
            unchanged.append(f"- {plain_text(bank.deck_name)}{version}")
        else:
            out.extend(section)
    if unchanged:
        out += ["## Unchanged decks", "", *unchanged, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _deck_section(
    key: str,
    before: Bank | None,
    bank: Bank | None,
    old: Snapshot,
    new: Snapshot,
    ref: str,
    templates_changed: bool,
) -> list[str] | None:
    """The deck's section, or None when nothing changed for its learners."""
    shown = bank or before
    assert shown is not None
    language = shown.language

    def h(word: str) -> str:
        return heading(language, word)

    name = plain_text(shown.deck_name)
    out = [f"## {name}", ""]
    old_lock = old.lock.decks.get(key)
    old_version, new_version = _versions(key, shown, old, new)
    since = f" ({h('since')} `{old_version}`)" if old_version and old_version != new_version else ""
    if new_version:
        out += [f"{h('version')}: `{new_version}`{since}", ""]
    if bank is None:
        out += [f"### {h('removed')}", ""]
        out += [f"- {_quote(i.question)}" for i in before.items] if before else []
        return [*out, ""]
    groups = _item_groups(before, bank, old, new)
    for word in ("new", "changed", "retired", "removed"):
        if groups[word]:
            out += [f"### {h(word)}", ""]
            out += [f"- {_quote(question)}" for question in groups[word]]
            out.append("")
    old_name = old_lock.name if old_lock else (plain_text(before.deck_name) if before else name)
    if not any(groups.values()):
        if old_name == name and not templates_changed and new_version == old_version:
            return None
        out += [h("nothing"), ""]
    if old_name != name:
        out += [f"### {h('renamed')}", "", f"`{old_name}` → `{name}`", ""]
    if templates_changed:
        out += [f"### {h('templates')}", ""]
    out += [f"### {h('import')}", "", *_import_steps(old_name, name, groups, templates_changed), ""]
    return out


def _versions(key: str, shown: Bank, old: Snapshot, new: Snapshot) -> tuple[str, str]:
    """The deck's version before and after ("" where it has no lock entry)."""
    old_lock, new_lock = old.lock.decks.get(key), new.lock.decks.get(key)
    old_version = lock_version(shown.topic, shown.language, old_lock) if old_lock else ""
    new_version = lock_version(shown.topic, shown.language, new_lock) if new_lock else ""
    return old_version, new_version


def _item_groups(
    before: Bank | None, bank: Bank, old: Snapshot, new: Snapshot
) -> dict[str, list[str]]:
    """The questions of the items new, changed, retired and removed since `before`."""
    old_items = {i.id: i for i in before.items} if before else {}
    groups: dict[str, list[str]] = {"new": [], "changed": [], "retired": [], "removed": []}
    for item in bank.items:
        was = old_items.get(item.id)
        if was is None:
            groups["new"].append(item.question)
        elif item.retired and not was.retired:
            groups["retired"].append(item.question)
        elif before is not None and changed(before, was, bank, item, old.lock, new.lock):
            groups["changed"].append(item.question)
    current = {i.id for i in bank.items}
    groups["removed"] = [i.question for i in old_items.values() if i.id not in current]
    return groups


def _import_steps(
    old_name: str, name: str, groups: dict[str, list[str]], templates_changed: bool
) -> list[str]:
    """The settings of Anki's import dialog (Anki 23.10 and later), by their English labels."""
    notetypes = "If newer" + (
        " (it installs the new card templates; choose **Always** if you edited the "
        "note type yourself and want the new templates over your edits)"
        if templates_changed
        else ""
    )
    steps = [
        "In Anki (23.10 or later): File → Import, choose the `.apkg` file, then set:",
        "",
        "- **Import any learning progress**: off (the package carries none; your reviews are kept)",
        "- **Import any deck presets**: off",
        "- **Merge notetypes**: off",
        "- **Update notes**: If newer (changed questions replace your copy unless you edited "
        "it after your last import)",
        f"- **Update notetypes**: {notetypes}",
    ]
    if old_name != name:
        steps.append(
            f"- Afterwards your existing cards are still in `{old_name}`: Browse, search "
            f'`"deck:{old_name}"`, select all, Cards → Change Deck → `{name}`.'
        )
    if groups["retired"]:
        steps.append(
            "- Retired questions are tagged `ankigen::retired`: Browse, search "
            "`tag:ankigen::retired`, and delete them if you no longer want them."
        )
    if groups["removed"]:
        steps.append(
            "- Anki never deletes notes on import: removed questions stay in your collection "
            "until you delete them."
        )
    return steps


def write_release_notes(
    banks_dir: Path, ref: str, out: Path | None = None, force: bool = False
) -> bool:
    """`release-notes`: the notes since `ref`, to `out` (standard output by default). An
    existing file is replaced only if its first line says it holds notes of the same
    banks folder, or with `force`. False if it already held exactly these."""
    paths = find_bank_paths(banks_dir)
    place = repository_place(banks_dir)
    first = mark(place[1])
    old = at_revision(banks_dir, ref, place)
    text = release_notes(old, working_tree(banks_dir, paths), ref, first)
    inputs = (*paths, banks_dir / LOCK_NAME, banks_dir / PROJECT_NAME)
    notes = Target(
        out or Path(STDOUT),
        "release notes",
        force,
        inputs,
        ours=lambda before: before.split(b"\n", 1)[0] == first.encode("utf-8"),
    )
    return write(notes, text.encode("utf-8"))
