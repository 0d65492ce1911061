"""How the `ankigen` command ends: as Python's exit would, without its teardown."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import SRC


def run_entry(prelude: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the console script's entry point after `prelude`, in a fresh interpreter."""
    script = textwrap.dedent(prelude) + textwrap.dedent(
        f"""
        import sys
        from ankigen.cli.entry import main
        sys.argv = ["ankigen", *{list(args)!r}]
        main()
        """
    )
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_exit_handlers_run_and_output_is_flushed(tmp_path: Path) -> None:
    done = run_entry(
        """
        import atexit, sys
        atexit.register(lambda: print("handler ran", flush=True))
        sys.stdout.write("x" * 100_000)  # buffered, not yet written
        """,
        "--version",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("x" * 100_000)
    assert "ankigen" in done.stdout
    assert done.stdout.endswith("handler ran\n")


def test_the_interpreter_is_not_torn_down(tmp_path: Path) -> None:
    """What the fast exit is for: objects are not freed one by one at the end."""
    done = run_entry(
        """
        import sys
        class Noisy:
            def __del__(self):
                sys.stderr.write("freed\\n")
        kept = Noisy()
        """,
        "--version",
        cwd=tmp_path,
    )
    assert done.returncode == 0
    assert "freed" not in done.stderr


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (("build", "no-such-folder"), 1, "error: no-such-folder: no such folder of banks\n"),
        (("build", "--bogus"), 2, "Error: No such option '--bogus'"),
    ],
)
def test_status_and_message_are_kept(
    tmp_path: Path, args: tuple[str, ...], status: int, message: str
) -> None:
    done = run_entry("", *args, cwd=tmp_path)
    assert done.returncode == status
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_running_thread_is_waited_for(tmp_path: Path) -> None:
    """With another thread still running, Python's own exit waits for it."""
    done = run_entry(
        """
        import threading, time
        def late():
            time.sleep(0.3)
            print("thread finished", flush=True)
        threading.Thread(target=late).start()
        """,
        "--version",
        cwd=tmp_path,
    )
    assert done.returncode == 0
    assert done.stdout.endswith("thread finished\n")


def test_without_standard_output_the_command_still_ends_cleanly(tmp_path: Path) -> None:
    """As under pythonw, where there is no console: nothing to flush, no traceback."""
    done = run_entry("import sys\nsys.stdout = None\n", "--version", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stderr == ""


def test_the_command_keeps_what_it_is_given_until_it_leaves(tmp_path: Path) -> None:
    """A build's working state is not freed piece by piece as the build returns: the
    command leaves without teardown anyway. A program that imports ankigen frees it."""
    script = textwrap.dedent(
        """
        import gc, sys, weakref
        from ankigen.core import process

        class State:
            pass

        def kept_after_return():
            state = State()
            process.keep_until_exit(state)
            return weakref.ref(state)

        library = kept_after_return()
        gc.collect()
        process.ends_without_teardown()
        command = kept_after_return()
        gc.collect()
        print(library() is None, command() is not None)
        """
    )
    env = dict(os.environ, PYTHONPATH=str(SRC))
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True True\n"


@pytest.mark.parametrize(
    ("module", "args"),
    [
        ("click", ["lint", "banks"]),  # in the entry point, before click has loaded
        ("ankigen.cli.building", ["build"]),  # on the quick path of a plain build
        ("ankigen.cli.commands.lint", ["lint", "banks"]),  # in a command click runs
    ],
)
def test_a_ctrl_c_while_a_class_is_made_is_an_interrupt(
    tmp_path: Path, module: str, args: list[str]
) -> None:
    """Python 3.11 turns a KeyboardInterrupt raised while a class is made (a frozen
    dataclass's fields, as modules load) into a RuntimeError, which was reported as an
    internal error of ankigen with status 1 (a random SIGINT in the fault tests found it).
    It is an interrupt: one line, status 130, at every stage of the start."""
    done = run_entry(
        f"""
        import importlib.abc, sys

        class Interrupted:
            def __set_name__(self, owner, name):
                raise KeyboardInterrupt

        class Hook(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == {module!r}:
                    type("Made", (), {{"field": Interrupted()}})
                return None

        sys.meta_path.insert(0, Hook())
        """,
        *args,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stderr.strip()) == (130, "interrupted"), done.stderr
