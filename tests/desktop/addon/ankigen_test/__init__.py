"""ankigen's test add-on: lets a test drive the real Anki desktop over a loopback socket.

Loaded by Anki from the base folder's addons21/. When the profile opens it
listens on 127.0.0.1 (a free port, written to BASE/ankigen-test.json) for one
JSON request per line and answers each with one JSON line. Every request runs
on Qt's main thread. It records the web views' JavaScript console messages.
Test use only: never shipped.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from aqt import gui_hooks, mw
from aqt.qt import QPoint, QWebEnginePage
from aqt.theme import Theme
from aqt.webview import AnkiWebPage

CONSOLE: list[dict[str, Any]] = []
_LEVELS = {
    QWebEnginePage.JavaScriptConsoleMessageLevel.InfoMessageLevel: "info",
    QWebEnginePage.JavaScriptConsoleMessageLevel.WarningMessageLevel: "warning",
    QWebEnginePage.JavaScriptConsoleMessageLevel.ErrorMessageLevel: "error",
}
_original_console = AnkiWebPage.javaScriptConsoleMessage


def _console(page: Any, level: Any, message: str | None, line: int, source: str | None) -> None:
    CONSOLE.append(
        {
            "level": _LEVELS.get(level, str(level)),
            "message": message or "",
            "line": line,
            "source": source or "",
        }
    )
    _original_console(page, level, message, line, source)


AnkiWebPage.javaScriptConsoleMessage = _console  # type: ignore[method-assign]


class Reply(Exception):
    """Raised by a command to answer with an error."""


def _web() -> Any:
    assert mw is not None
    return mw.reviewer.web if mw.state == "review" else mw.web


# Each command runs on the main thread and calls done(result) once, maybe later.
def cmd_ping(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    assert mw is not None
    done(
        {
            "pid": os.getpid(),
            "display": os.environ.get("DISPLAY"),
            "xauthority": os.environ.get("XAUTHORITY"),
            "state": mw.state,
        }
    )


def cmd_import(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    from anki.collection import ImportAnkiPackageOptions, ImportAnkiPackageRequest

    assert mw is not None and mw.col is not None
    request = ImportAnkiPackageRequest(
        package_path=args["path"], options=ImportAnkiPackageOptions()
    )
    log = mw.col.import_anki_package(request).log
    mw.col.models._clear_cache()
    done({"new": len(log.new), "updated": len(log.updated)})


def cmd_review(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    assert mw is not None and mw.col is not None
    deck = mw.col.decks.id_for_name(args["deck"])
    if not deck:
        raise Reply(f"no deck named {args['deck']!r}")
    mw.col.decks.select(deck)
    mw.moveToState("review")
    done(mw.state)


def cmd_eval(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    # JSON.stringify so that any value, undefined included, comes back intact
    js = f"JSON.stringify((function () {{ return ({args['js']}); }})()) || 'null'"
    _web().evalWithCallback(js, lambda value: done(json.loads(value) if value else None))


def cmd_theme(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    assert mw is not None
    mw.set_theme(Theme.DARK if args["dark"] else Theme.LIGHT)
    done(mw.pm.theme().name)


def cmd_window(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    """Size and place the main window, give it focus; answer where the web view is."""
    assert mw is not None
    if "width" in args:
        mw.showNormal()
        mw.resize(args["width"], args["height"])
        mw.move(0, 0)
    mw.activateWindow()
    mw.raise_()
    web = _web()
    web.setFocus()
    origin = web.mapToGlobal(QPoint(0, 0))
    frame = mw.frameGeometry()
    done(
        {
            "x": origin.x(),
            "y": origin.y(),
            "width": web.width(),
            "height": web.height(),
            "zoom": web.zoomFactor(),
            "window": [frame.width(), mw.width(), mw.height()],
            "focused": mw.isActiveWindow(),
        }
    )


def cmd_screenshot(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    """The main window as a PNG, for looking at a failure."""
    assert mw is not None
    done(mw.grab().save(args["path"], "PNG"))


def cmd_console(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    messages = list(CONSOLE)
    CONSOLE.clear()
    done(messages)


def cmd_state(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    assert mw is not None
    reviewer = mw.reviewer
    done(
        {
            "state": mw.state,
            "side": getattr(reviewer, "state", None),
            "card": reviewer.card.id if mw.state == "review" and reviewer.card else None,
        }
    )


COMMANDS = {name[4:]: f for name, f in dict(globals()).items() if name.startswith("cmd_")}


def _run_on_main(request: dict[str, Any]) -> dict[str, Any]:
    assert mw is not None
    finished = threading.Event()
    out: dict[str, Any] = {}

    def done(result: Any) -> None:
        out["result"] = result
        finished.set()

    def run() -> None:
        try:
            COMMANDS[request["cmd"]](request.get("args", {}), done)
        except Reply as error:
            out["error"] = str(error)
            finished.set()
        except Exception:
            out["error"] = traceback.format_exc()
            finished.set()

    if request.get("cmd") not in COMMANDS:
        return {"error": f"unknown command {request.get('cmd')!r}"}
    mw.taskman.run_on_main(run)
    if not finished.wait(request.get("timeout", 60)):
        return {"error": f"{request['cmd']}: no answer from Anki's main thread in time"}
    return out


def _serve(server: socket.socket) -> None:
    while True:
        conn, _ = server.accept()
        with conn, conn.makefile("rwb") as stream:
            for line in stream:
                try:
                    reply = _run_on_main(json.loads(line))
                except Exception:
                    reply = {"error": traceback.format_exc()}
                stream.write(json.dumps(reply).encode() + b"\n")
                stream.flush()


def _start() -> None:
    assert mw is not None
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    threading.Thread(target=_serve, args=(server,), daemon=True, name="ankigen-test").start()
    info = os.path.join(mw.pm.base, "ankigen-test.json")
    with open(info + ".tmp", "w", encoding="utf-8") as f:
        json.dump({"port": server.getsockname()[1], "pid": os.getpid(), "time": time.time()}, f)
    os.replace(info + ".tmp", info)


gui_hooks.profile_did_open.append(_start)
