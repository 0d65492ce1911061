"""Checking banks for lint, status, preview and translate: read, load, check each and
across them, images too; the same problems an author sees from `build`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ankigen.bank.files import (
    Source,
    find_banks,
    read_files,
    read_sources,
)
from ankigen.bank.folder import LOCK_NAME
from ankigen.bank.model import Bank, Outline
from ankigen.bank.project import load_project
from ankigen.bank.workspace import default_media_dir
from ankigen.checks.across import (
    check_across,
)
from ankigen.checks.incremental import (
    _check_each,
    _Result,
    broken_parts,
)
from ankigen.core.errors import Diagnostic, InvalidBanks
from ankigen.core.parallel import Pool
from ankigen.identity.lockfile import lock_problems
from ankigen.images.process import check, image_refs


@dataclass(frozen=True)
class Checked:
    """Banks that loaded, with every problem found in and across them."""

    banks: tuple[Bank, ...]
    diagnostics: tuple[Diagnostic, ...]
    failed: tuple[Path, ...] = ()
    """Bank files that could not be loaded at all."""
    reference: str = ""
    """The project's reference language, if it names one."""

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity == "warning" for d in self.diagnostics)


def check_paths(
    paths: Iterable[Path],
    media_dir: Path | None = None,
    pool: Pool | None = None,
    reference: str = "",
    deck_name: Callable[[Bank], str] | None = None,
) -> Checked:
    """Read, load and check banks (for lint, status and preview)."""
    sources, unreadable = read_files(list(paths))
    checked = check_sources(sources, media_dir, pool, reference=reference, deck_name=deck_name)
    if not unreadable:
        return checked
    return replace(checked, diagnostics=tuple(sorted([*checked.diagnostics, *unreadable])))


class Known(dict[str, tuple[str, "_Result"]]):
    """Each bank's own check by its path, with the digest of the bytes it checked: what
    `serve` keeps between two checks, so that only the banks that changed are checked
    again (the checks across banks always run). For one project's settings."""


def check_sources(
    sources: Sequence[Source],
    media_dir: Path | None = None,
    pool: Pool | None = None,
    reference: str = "",
    deck_name: Callable[[Bank], str] | None = None,
    known: Known | None = None,
) -> Checked:
    """Load and check banks from the bytes already read; with `media_dir`, also verify
    every image they name. `reference` is the project's reference language (by
    default English where a topic has it). With `known`, a bank whose bytes it knows is
    not checked again, and it learns the others."""
    if known is None:
        results = _check_each(sources, pool, None, reference)
    else:
        fresh = [s for s in sources if known.get(s.shown, ("",))[0] != s.digest]
        checked_now = _check_each(fresh, pool, None, reference)
        kept = {s.shown: known[s.shown] for s in sources if s.shown in known}
        known.clear()
        known.update(kept)
        known.update((s.shown, (s.digest, checked_now[s.shown])) for s in fresh)
        results = {s.shown: known[s.shown][1] for s in sources}
    banks = {path: bank for path, (bank, _, _) in results.items() if bank is not None}
    outlines = [found for _, found, _ in results.values() if found is not None]
    diagnostics = [d for _, _, found in results.values() for d in found]
    diagnostics.extend(
        check_across(
            outlines,
            lambda o: banks[o.bank.path],
            reference,
            deck_name=deck_name,
            broken=broken_parts(sources, results),
        )
    )
    if media_dir is not None:
        diagnostics.extend(check_images(outlines, media_dir))
    failed = tuple(Path(path) for path, (bank, _, _) in results.items() if bank is None)
    return Checked(tuple(banks.values()), tuple(sorted(diagnostics)), failed, reference)


def check_images(outlines: Sequence[Outline], media_dir: Path) -> list[Diagnostic]:
    return check(image_refs(outlines), media_dir)


def checked_banks(banks_dir: Path, known: Known | None = None) -> Checked:
    """Every bank and its warnings, or InvalidBanks with all the errors (for preview).
    `known`: as `check_sources` has it.

    The project file's settings (deck names, tags) are applied to the banks."""

    sources, problems = read_sources(banks_dir)
    project, project_problems = load_project(banks_dir)
    checked = check_sources(sources, reference=project.reference, known=known)
    if checked.errors or problems or project_problems:
        raise InvalidBanks([*checked.diagnostics, *problems, *project_problems])
    return replace(checked, banks=project.apply_all(checked.banks))


@dataclass(frozen=True)
class Linted:
    """Every problem in every bank of a folder, for `ankigen lint`."""

    diagnostics: tuple[Diagnostic, ...]
    errors: int
    warnings: int
    banks: int

    def fails(self, strict: bool) -> bool:
        return bool(self.errors or (strict and self.warnings))


def lint(banks_dir: Path, media: Path | None = None) -> Linted:
    """Every bank of the folder checked, images included; unusable files and problems
    with the project file or the lock count as errors: `build` refuses to run with any."""
    paths, unusable = find_banks(banks_dir)
    project, problems = load_project(banks_dir)
    problems = [*problems, *lock_problems(banks_dir / LOCK_NAME)]
    checked = check_paths(
        paths,
        media or default_media_dir(banks_dir, project),
        reference=project.reference,
        deck_name=project.deck_name,
    )
    diagnostics = sorted([*problems, *checked.diagnostics, *unusable])
    errors = checked.errors + len(unusable) + len(problems)
    return Linted(tuple(diagnostics), errors, checked.warnings, len(paths))
