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
import re
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


def cmd_popup(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    """The class of the popup (a context menu) open now, or None."""
    from aqt.qt import QApplication

    popup = QApplication.activePopupWidget()
    if popup is not None and args.get("close"):
        popup.close()
    done(type(popup).__name__ if popup is not None else None)


def cmd_decks(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    """The decks that hold cards of their own, by name."""
    assert mw is not None and mw.col is not None
    names = [d.name for d in mw.col.decks.all_names_and_ids()]
    done(sorted(n for n in names if mw.col.decks.card_count(mw.col.decks.id_for_name(n), False)))


def cmd_card_count(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    """How many cards the deck named `deck` holds of its own."""
    assert mw is not None and mw.col is not None
    done(mw.col.decks.card_count(mw.col.decks.id_for_name(args["deck"]), False))


def cmd_set_field(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    """Change one field of the note whose ItemId is `item`, as Anki's editor would."""
    assert mw is not None and mw.col is not None
    (note_id,) = mw.col.find_notes(f'"ItemId:{args["item"]}"')
    note = mw.col.get_note(note_id)
    note[args["field"]] = args["value"]
    mw.col.update_note(note)
    done({"note": note_id})


# Functions that Anki's reviewer page and its bottom bar define in their own scripts
# (reviewer.js, reviewer-bottom.js) and that Anki's Python calls right after loading them.
_REVIEWER_PROBE = "typeof _showQuestion === 'function' && typeof _drawFlag === 'function'"
_BOTTOM_PROBE = "typeof showQuestion === 'function'"
_ANKI_OWN = re.compile(
    r"Uncaught ReferenceError: (_showQuestion|_showAnswer|_drawFlag|_drawMark|"
    r"_blockDefaultDragDropBehavior|showQuestion|showAnswer) is not defined"
)
_PAGE_FACTS = """JSON.stringify({url: location.href, title: document.title,
    body: document.body ? document.body.innerText.slice(0, 300) : null,
    resources: performance.getEntriesByType('resource').map(function (e) {
        return [e.name, e.responseStatus, Math.round(e.duration)]; })})"""


def cmd_review(args: dict[str, Any], done: Callable[[Any], None]) -> None:
    """Open a deck in the reviewer; answer once Anki's own page has its scripts.

    On a loaded machine Anki's reviewer page sometimes finishes loading without its
    own scripts (every call Anki then makes into it is a ReferenceError, and no card
    ever shows). That is Anki's page, before any card is drawn: reload it, at most
    twice, and say so in the answer with what the broken page held.
    """
    assert mw is not None and mw.col is not None
    deck = mw.col.decks.id_for_name(args["deck"])
    if not deck:
        raise Reply(f"no deck named {args['deck']!r}")
    mw.col.decks.select(deck)
    mw.moveToState("review")
    if mw.state != "review":  # nothing due: the overview stays, and there is no reviewer page
        done({"state": mw.state, "reloads": []})
        return
    _when_reviewer_loaded(done, reloads=[])


def _when_reviewer_loaded(done: Callable[[Any], None], reloads: list[Any]) -> None:
    assert mw is not None
    reviewer = mw.reviewer
    attempt: dict[str, Any] = {}  # what each page answered; "over" once this attempt is decided

    def decide() -> None:
        if "over" in attempt:
            return
        attempt["over"] = True
        main_ok, main_facts = attempt.get("main", [False, "no answer in time"])
        bottom_ok, bottom_facts = attempt.get("bottom", [False, "no answer in time"])
        if main_ok and bottom_ok:
            done({"state": mw.state if mw else None, "reloads": reloads})
            return
        # the ReferenceErrors of Anki's own calls into its broken page: no card was drawn
        CONSOLE[:] = [m for m in CONSOLE if not _ANKI_OWN.fullmatch(m["message"])]
        broken = {"reviewer": None if main_ok else main_facts}
        broken["bottom bar"] = None if bottom_ok else bottom_facts
        reloads.append(broken)
        print(f"ankigen test: Anki's reviewer page came without its scripts: {broken}")
        if len(reloads) > 2:
            done({"error": "Anki's reviewer page came without its scripts three times",
                  "reloads": reloads})  # fmt: skip
            return
        assert mw is not None
        mw.moveToState("review")  # from review to review: Anki loads both pages again
        _when_reviewer_loaded(done, reloads)

    def answered(name: str, value: str | None) -> None:
        attempt[name] = json.loads(value) if value else [False, None]
        if "main" in attempt and "bottom" in attempt:
            decide()

    # evals wait in Anki's queue until the page is loaded, after Anki's own calls into it
    reviewer.web.evalWithCallback(
        f"JSON.stringify([{_REVIEWER_PROBE}, {_PAGE_FACTS}])",
        lambda value: answered("main", value),
    )
    reviewer.bottom.web.evalWithCallback(
        f"JSON.stringify([{_BOTTOM_PROBE}, {_PAGE_FACTS}])",
        lambda value: answered("bottom", value),
    )
    # a page that never finishes loading never answers
    mw.progress.single_shot(15_000, decide, False)


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
