"""The `ankigen-lint` hook of .pre-commit-hooks.yaml, as a team that uses pre-commit
meets it: `pre-commit try-repo` on this checkout, in a sample project's own git
repository, on what is staged there. pre-commit installs this checkout into a virtual
environment of its own (from the package index, as it does for any hook)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, item, write_bank


def pre_commit() -> list[str]:
    if importlib.util.find_spec("pre_commit") is not None:
        return [sys.executable, "-m", "pre_commit"]
    found = shutil.which("pre-commit")
    if found is None:
        pytest.skip("needs pre-commit (the test extras)")
    return [found]


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


def test_a_bad_bank_fails_the_hook_and_a_good_one_passes(tmp_path: Path) -> None:
    if not (REPO / ".git").exists():
        pytest.skip("try-repo needs this checkout to be a git repository")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),  # no user's cache touched
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
    )
    env.pop("PYTHONPATH", None)  # the hook's own environment, not this checkout's src

    def hook() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*pre_commit(), "try-repo", str(REPO), "ankigen-lint"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
        )

    bank = write_bank(project / "banks", items=[item("one", answer=9), item("two")])
    git(project, "add", "-A")
    failed = hook()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "banks/demo/en.yaml:" in failed.stdout
    assert "answer 9 is out of range" in failed.stdout

    write_bank(project / "banks", items=[item("one"), item("two", 2)])
    git(project, "add", "-A")
    passed = hook()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "ankigen lint" in passed.stdout and "Passed" in passed.stdout
    git(project, "commit", "-q", "-m", "good bank")

    # a change outside the banks and the project file does not run the hook
    bank.write_text(bank.read_text("utf-8").replace("answer: 2", "answer: 9"), "utf-8")
    (project / "README").write_text("notes\n", "utf-8")
    git(project, "add", "README")
    skipped = hook()
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "Skipped" in skipped.stdout

    # a lock left with git's merge conflict markers, staged alone, fails it as the build would
    git(project, "checkout", "--", "banks")
    (project / "banks" / "ankigen.lock").write_text(
        '{\n<<<<<<< HEAD\n "version": 2\n=======\n "version": 2\n>>>>>>> theirs\n}\n', "utf-8"
    )
    git(project, "add", "banks/ankigen.lock")
    conflicted = hook()
    assert conflicted.returncode == 1, conflicted.stdout + conflicted.stderr
    assert "banks/ankigen.lock:2: error: the lock file holds git merge conflict markers" in (
        conflicted.stdout
    )
