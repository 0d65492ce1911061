"""The real Anki desktop (aqt from PyPI) under Xvfb, driven through ankigen's test add-on.

`AnkiDesktop` makes a base folder with one profile (no first-run dialogs, no
update checks, no sync), installs the test add-on and any extra add-on
folders, starts Anki under `xvfb-run`, and talks to the add-on over a
loopback socket. Mouse and keyboard input are real X events (xdotool).
Every wait has a deadline: a stuck or crashed Anki fails the test with the
tail of its log, it never hangs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ADDON = Path(__file__).parent / "addon" / "ankigen_test"
PROFILE = "test"
# what the machine needs, for the message when something is missing
NEEDS = (
    "aqt (pip, the same version as anki), xvfb-run and xdotool (apt); `bash .ci/run` installs them"
)


class AnkiDesktopError(Exception):
    """Anki did not start, died, or did not answer in time."""


def missing() -> list[str]:
    """What this machine lacks to run the real Anki desktop."""
    out = [tool for tool in ("xvfb-run", "xdotool") if shutil.which(tool) is None]
    if importlib.util.find_spec("aqt") is None:  # not imported here: it would start Qt
        out.append("aqt")
    return out


def prepare_base(base: Path, python: str = sys.executable) -> None:
    """A base folder with one profile: first run done, no update checks, no sync."""
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from aqt.profiles import ProfileManager

        pm = ProfileManager(ProfileManager.get_created_base_folder(sys.argv[1]))
        pm.setupMeta()
        pm.meta["firstRun"] = False
        pm.meta["defaultLang"] = "en_US"
        pm.set_update_check(False)
        pm.create(sys.argv[2])
        pm.load(sys.argv[2])
        pm.profile["autoSync"] = False
        pm.profile["syncMedia"] = False
        pm.profile["autoSyncMediaMinutes"] = 0
        pm.set_check_for_addon_updates(False)
        pm.set_last_loaded_profile_name(sys.argv[2])
        pm.save()
        pm.db.close()
        """
    )
    base.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [python, "-c", script, str(base), PROFILE],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise AnkiDesktopError(f"could not prepare the Anki base folder:\n{done.stderr[-3000:]}")


class AnkiDesktop:
    """One running Anki desktop, driven by requests to the test add-on."""

    def __init__(
        self,
        base: Path,
        addons: Sequence[Path] = (),
        start_timeout: float = 180,
        screen: str = "1280x1024x24",
        program: Path | None = None,
    ) -> None:
        self.base = base
        # the `anki` launcher of the environment running the tests (aqt's console script)
        self.program = program or Path(sys.executable).parent / "anki"
        self.addons = [ADDON, *addons]
        self.start_timeout = start_timeout
        self.screen = screen
        self.log_path = base.parent / f"{base.name}-anki.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.stream: Any = None
        self.sock: socket.socket | None = None
        self.env: dict[str, str] = {}

    # life cycle
    def start(self) -> AnkiDesktop:
        from tests.support import gui  # pytest's: the harness itself needs none

        gui.check("the Anki desktop")
        prepare_base(self.base)
        addons21 = self.base / "addons21"
        addons21.mkdir(exist_ok=True)
        for addon in self.addons:
            shutil.copytree(addon, addons21 / addon.name, dirs_exist_ok=True)
        info = self.base / "ankigen-test.json"
        info.unlink(missing_ok=True)
        env = dict(os.environ)
        env.update(
            QTWEBENGINE_CHROMIUM_FLAGS="--no-sandbox",
            QT_QPA_PLATFORM="xcb",
            # no dbus session on a bare machine: Qt would otherwise wait for it
            DBUS_SESSION_BUS_ADDRESS="disabled:",
            PYTHONDONTWRITEBYTECODE="1",
            # Anki is one instance per user: a second one, from another test run at the same
            # time, hands its arguments to the first and exits ("Already running")
            ANKI_SINGLE_INSTANCE_KEY=f"ankigen-test-{hashlib.sha256(bytes(self.base)).hexdigest()[:16]}",
        )
        command = [
            "xvfb-run", "-a", "-s", f"-screen 0 {self.screen}",
            str(self.program), "-b", str(self.base), "-p", PROFILE,
        ]  # fmt: skip
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own process group, so close() ends Xvfb too
            )
        deadline = time.monotonic() + self.start_timeout
        while not info.exists():
            if self.process.poll() is not None:
                raise AnkiDesktopError(
                    f"Anki exited with status {self.process.returncode} before its profile "
                    f"opened.\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                self.close()
                raise AnkiDesktopError(
                    f"Anki did not open its profile within {self.start_timeout:.0f} s.\n"
                    f"{self.log_tail()}"
                )
            time.sleep(0.2)
        port = json.loads(info.read_text(encoding="utf-8"))["port"]
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.stream = self.sock.makefile("rwb")
        hello = self.call("ping")
        self.env = {"DISPLAY": hello["display"]}
        if hello.get("xauthority"):
            self.env["XAUTHORITY"] = hello["xauthority"]
        return self

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.process is not None and self.process.poll() is None:
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
                try:
                    os.killpg(self.process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.process.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue

    def __enter__(self) -> AnkiDesktop:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def log_tail(self, chars: int = 4000) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return f"--- last of {self.log_path}:\n{text[-chars:]}"

    # requests to the add-on
    def call(self, cmd: str, timeout: float = 60, **args: Any) -> Any:
        if self.sock is None:
            raise AnkiDesktopError("Anki is not running")
        self.sock.settimeout(timeout + 5)
        started = time.monotonic()
        try:
            self.stream.write(json.dumps({"cmd": cmd, "args": args, "timeout": timeout}).encode())
            self.stream.write(b"\n")
            self.stream.flush()
            line = self.stream.readline()
        except OSError as error:
            raise AnkiDesktopError(f"{cmd}: {error}\n{self.log_tail()}") from error
        if not line:
            raise AnkiDesktopError(f"{cmd}: Anki closed the connection\n{self.log_tail()}")
        reply = json.loads(line)
        took = time.monotonic() - started
        if took > 2:  # shown with a failing test's output: where the time went
            print(f"ankigen desktop: {cmd} took {took:.1f} s", file=sys.stderr)
        if "error" in reply:
            raise AnkiDesktopError(f"{cmd}: {reply['error']}")
        return reply["result"]

    def eval(self, js: str, timeout: float = 30) -> Any:
        """The value of a JavaScript expression in the current web view (reviewer or main)."""
        return self.call("eval", timeout=timeout, js=js)

    def wait_for(self, js: str, timeout: float = 30, what: str = "") -> Any:
        """Poll a JavaScript expression until it is truthy; its value."""
        started = time.monotonic()
        deadline = started + timeout
        while True:
            value = self.eval(js)
            if value:
                if time.monotonic() - started > 2:
                    took = time.monotonic() - started
                    print(f"ankigen desktop: waited {took:.1f} s for {what or js}", file=sys.stderr)
                return value
            if time.monotonic() > deadline:
                raise AnkiDesktopError(
                    f"timed out after {timeout:.0f} s waiting for {what or js}\n{self.log_tail()}"
                )
            time.sleep(0.1)

    def settle(self, js: str, timeout: float = 15, what: str = "") -> Any:
        """Poll a JavaScript expression until it gives the same value four times in a row
        (layout after a resize, Anki's scroll to #answer); that value."""
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while len(seen) < 4 or len(set(seen[-4:])) > 1:
            if time.monotonic() > deadline:
                raise AnkiDesktopError(f"{what or js} kept changing: {seen[-4:]}")
            seen.append(json.dumps(self.eval(js)))
            time.sleep(0.1)
        return json.loads(seen[-1])

    def import_package(self, path: Path) -> dict[str, int]:
        result: dict[str, int] = self.call("import", path=str(path))
        return result

    def review(self, deck: str) -> None:
        """Open a deck in the reviewer, with a console emptied of what came before."""
        self.console()
        result = self.call("review", deck=deck)
        for reload in result["reloads"]:
            print(
                f"ankigen desktop: Anki's reviewer page lacked its scripts: {reload}",
                file=sys.stderr,
            )
        if "error" in result:
            raise AnkiDesktopError(f"review: {result['error']}\n{self.log_tail()}")
        if result["state"] != "review":
            raise AnkiDesktopError(f"review: {deck!r} has nothing to review ({result['state']})")

    def review_until(self, deck: str, js: str, what: str) -> Any:
        """Open a deck in the reviewer, focus the window and wait for `js`; once more if
        the card never shows. On a loaded machine Anki's reviewer has been seen to probe
        the deck browser's page in its place, reload, and then never draw the card: a
        race in Anki's page loading, not in the card, which a second opening gets past
        (a card that cannot draw fails both)."""
        self.review(deck)
        self.window()
        try:
            return self.wait_for(js, what=what)
        except AnkiDesktopError as error:
            print(f"ankigen desktop: opening {deck!r} again: {error}", file=sys.stderr)
        self.review(deck)
        self.window()
        return self.wait_for(js, what=what)

    def theme(self, dark: bool) -> None:
        self.call("theme", dark=dark)

    def window(self, width: int | None = None, height: int | None = None) -> dict[str, Any]:
        """Size the main window (when given) and focus it; where its web view is on screen."""
        args = {"width": width, "height": height} if width else {}
        result: dict[str, Any] = self.call("window", **args)
        return result

    def screenshot(self, path: Path) -> None:
        """Save the main window as a PNG."""
        if not self.call("screenshot", path=str(path)):
            raise AnkiDesktopError(f"could not save a screenshot to {path}")

    def console(self) -> list[dict[str, Any]]:
        """The JavaScript console messages since the last call."""
        result: list[dict[str, Any]] = self.call("console")
        return result

    # real X input
    def xdotool(self, *args: str) -> None:
        started = time.monotonic()
        done = subprocess.run(
            ["xdotool", *args],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        took = time.monotonic() - started
        if took > 2:
            print(f"ankigen desktop: xdotool {' '.join(args)} took {took:.1f} s", file=sys.stderr)
        if done.returncode != 0:
            raise AnkiDesktopError(f"xdotool {' '.join(args)}: {done.stderr.strip()}")

    def screen_point(self, selector: str) -> tuple[int, int]:
        """The screen position of the middle of the first element matching a CSS selector."""
        view = self.window()
        rect = self.eval(
            f"""(function () {{ var e = document.querySelector({json.dumps(selector)});
                if (!e) {{ return null; }}
                e.scrollIntoView({{block: 'nearest'}});
                var r = e.getBoundingClientRect();
                return [r.left + r.width / 2, r.top + r.height / 2]; }})()"""
        )
        if rect is None:
            raise AnkiDesktopError(f"nothing matches {selector!r}")
        zoom = view["zoom"]
        return round(view["x"] + rect[0] * zoom), round(view["y"] + rect[1] * zoom)

    def move_to(self, selector: str) -> None:
        """Move the pointer over an element and wait until the page has seen it there."""
        x, y = self.screen_point(selector)
        # a real motion event even when the pointer is already there (--sync would then wait
        # 15 s for a move that never comes); the page's :hover state is the synchronization
        self.xdotool("mousemove", str(x - 1), str(y), "mousemove", str(x), str(y))
        self.wait_for(
            f"document.querySelector({json.dumps(selector)}).matches(':hover')",
            timeout=10,
            what=f"{selector} under the pointer",
        )

    def click(self, selector: str) -> None:
        self.move_to(selector)
        self.xdotool("click", "1")

    def key(self, *keys: str) -> None:
        self.xdotool("key", "--delay", "50", *keys)


def require() -> None:
    """Fail (or, with ANKIGEN_DESKTOP_TESTS=skip, skip) when the machine can't run Anki."""
    import pytest

    lacking = missing()
    if lacking:
        if os.environ.get("ANKIGEN_DESKTOP_TESTS") == "skip":
            pytest.skip(f"ANKIGEN_DESKTOP_TESTS=skip and this machine lacks {', '.join(lacking)}")
        pytest.fail(f"the real Anki desktop tests need {', '.join(lacking)}: {NEEDS}")


def with_decks(
    root: Path, decks: dict[str, tuple[str, dict[str, Any]]], width: int, height: int
) -> Iterator[AnkiDesktop]:
    """A running Anki with one imported deck per bank (topic: (language, item)), built by
    ankigen's own CLI; its main window width x height. For a module's fixture."""
    from tests.helpers import write_bank

    project = root / "project"
    for topic, (language, data) in decks.items():
        write_bank(project / "banks", topic, language, items=[data])
    yield from with_project(root, project, width, height)


def with_project(root: Path, project: Path, width: int, height: int) -> Iterator[AnkiDesktop]:
    """A running Anki with every deck of a project's banks (in `project`/banks), built by
    ankigen's own CLI; its main window width x height. For a module's fixture."""
    from click.testing import CliRunner

    from tests.helpers import invoke

    require()
    old = Path.cwd()
    os.chdir(project)
    try:
        assert invoke(CliRunner(), "build").exit_code == 0
    finally:
        os.chdir(old)
    with AnkiDesktop(root / "base") as desktop:
        # the first page Anki shows, loaded to the end before anything else is asked of
        # it: on a slow first start the reviewer was once asked for while it still
        # loaded, and Anki made its calls into that page instead of the reviewer's
        desktop.wait_for("document.readyState === 'complete'", what="Anki's first page")
        for package in sorted((project / "out").glob("*.apkg")):
            assert desktop.import_package(package)["new"] > 0
        desktop.window(width, height)
        yield desktop
