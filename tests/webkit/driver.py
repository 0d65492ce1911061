"""Drive one WebKitGTK web view: JSON requests on standard input, JSON answers on standard output.

Run with Debian's /usr/bin/python3 (python3-gi, gir1.2-webkit2-4.1) under
xvfb-run: the test's own virtual environment has no GObject bindings.
Requests: {"load": URL} waits for the page to finish loading;
{"eval": EXPR} answers the expression's value, as JSON; {"keys": "Tab space"} sends
key presses and releases, by GDK key name (a "+" joins modifiers, as in "alt+2"), to
the view as GTK delivers a keyboard's, and answers once GTK has handed them on. Every answer is
{"result": ...} or {"error": "..."}. Page errors are collected in
window.__agErrors by a script that runs before the page's own.
"""

import json
import sys

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import Gdk, GLib, Gtk, WebKit2  # noqa: E402

KEY_DELAY_MS = 50
MODIFIERS = {"alt": Gdk.ModifierType.MOD1_MASK, "shift": Gdk.ModifierType.SHIFT_MASK,
             "ctrl": Gdk.ModifierType.CONTROL_MASK}  # fmt: skip

CATCH_ERRORS = """
window.__agErrors = [];
window.addEventListener('error', function (e) { window.__agErrors.push(String(e.message)); });
window.addEventListener('unhandledrejection', function (e) { window.__agErrors.push(String(e.reason)); });
"""


def main():
    width, height = (int(n) for n in (sys.argv[1:] or ["390x844"])[0].split("x"))
    content = WebKit2.UserContentManager()
    content.add_script(
        WebKit2.UserScript.new(
            CATCH_ERRORS,
            WebKit2.UserContentInjectedFrames.ALL_FRAMES,
            WebKit2.UserScriptInjectionTime.START,
            None,
            None,
        )
    )
    view = WebKit2.WebView.new_with_user_content_manager(content)
    window = Gtk.OffscreenWindow()
    window.set_default_size(width, height)
    window.add(view)
    window.show_all()
    loop = GLib.MainLoop()
    state = {}

    def finish(result):
        state["answer"] = result
        loop.quit()

    def on_load(_view, event):
        if event == WebKit2.LoadEvent.FINISHED and state.get("loading"):
            state["loading"] = False
            finish({"result": view.get_uri()})

    def on_failed(_view, _event, uri, error):
        state["loading"] = False
        finish({"error": f"{uri}: {error.message}"})
        return True

    view.connect("load-changed", on_load)
    view.connect("load-failed", on_failed)

    def on_eval(_view, result):
        try:
            value = view.evaluate_javascript_finish(result)
            finish({"result": json.loads(value.to_string())})
        except Exception as error:  # a JavaScript exception, reported to the test
            finish({"error": str(error)})

    def timeout():
        state["timer"] = None
        finish({"error": "no answer from WebKit within 30 s"})
        return False

    def key_event(kind, keyval, state):
        found, entries = Gdk.Keymap.get_for_display(view.get_display()).get_entries_for_keyval(
            keyval
        )
        event = Gdk.Event.new(kind)
        event.key.window = view.get_window()
        event.key.send_event = True
        event.key.time = Gdk.CURRENT_TIME
        event.key.keyval = keyval
        event.key.state = state
        event.key.hardware_keycode = entries[0].keycode if found else 0
        event.set_device(view.get_display().get_default_seat().get_keyboard())
        view.event(event)

    def send_keys(names):
        view.grab_focus()
        # an offscreen window is never the active one: tell the view it has the focus
        focus = Gdk.Event.new(Gdk.EventType.FOCUS_CHANGE)
        focus.focus_change.window = view.get_window()
        focus.focus_change.send_event = True
        focus.focus_change.in_ = 1
        view.event(focus)
        events = []
        for name in names.split():
            *mods, key = name.split("+")
            state = Gdk.ModifierType(0)
            for mod in mods:
                state |= MODIFIERS[mod]
            keyval = Gdk.keyval_from_name(key)
            events += [
                (Gdk.EventType.KEY_PRESS, keyval, state),
                (Gdk.EventType.KEY_RELEASE, keyval, state),
            ]

        # one event at a time, as a keyboard types: sent in one go, only the first key
        # reached the page (tried)
        def next_event():
            if not events:
                finish({"result": None})
                return False
            key_event(*events.pop(0))
            return True

        GLib.timeout_add(KEY_DELAY_MS, next_event)
        return False

    version = f"WebKitGTK {WebKit2.get_major_version()}.{WebKit2.get_minor_version()}"
    print(json.dumps({"result": version}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        state.pop("answer", None)
        if "load" in request:
            state["loading"] = True
            view.load_uri(request["load"])
        elif "keys" in request:
            GLib.idle_add(send_keys, request["keys"])
        else:
            body = request["eval"]
            script = f"JSON.stringify((function () {{ return ({body}); }})()) || 'null'"
            view.evaluate_javascript(script, -1, None, None, None, on_eval)
        state["timer"] = GLib.timeout_add_seconds(30, timeout)
        if "answer" not in state:
            loop.run()
        if state["timer"] is not None:
            GLib.source_remove(state["timer"])
        print(json.dumps(state["answer"]), flush=True)


if __name__ == "__main__":
    main()
