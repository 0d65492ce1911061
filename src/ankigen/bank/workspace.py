"""The banks folder as every command finds it: its bank files, and the media folder
beside it (or the one the project file names)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ankigen.bank.files import find_banks
from ankigen.bank.project import load_project
from ankigen.core.errors import InvalidBanks

if TYPE_CHECKING:
    from ankigen.bank.project import Project


def find_bank_paths(banks_dir: Path) -> list[Path]:
    """Bank files for lint, status and preview; unusable paths are errors."""
    paths, problems = find_banks(banks_dir)
    if problems:
        raise InvalidBanks(problems)
    return paths


def default_media_dir(banks_dir: Path, project: Project | None = None) -> Path:
    """The project file's `media`, else `media/` beside the banks folder."""
    if project is None:
        project, _ = load_project(banks_dir)
    return project.media or banks_dir.parent / "media"
