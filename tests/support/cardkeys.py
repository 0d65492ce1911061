"""Page scripts the key tests run in every engine (Chromium, the Anki desktop's webview,
WebKitGTK): plain JavaScript expressions, so each engine's `eval` takes them as they are,
and the three engines are asked the same questions."""

# Install a client: a listener on the window, after the card's, as AnkiWeb's and
# AnkiDroid's own key handlers are. It records each Space or Enter that reached it,
# whether the card had taken it (defaultPrevented), and whether a control of the card
# still had the focus; `window.__heard.splice(0)` reads and empties the record.
HEAR_CLIENT_KEYS = """(function () { window.__heard = [];
    window.addEventListener('keydown', function (e) {
        if (e.key !== ' ' && e.key !== 'Enter') { return; }
        var a = document.activeElement;
        window.__heard.push([e.key, e.defaultPrevented, !!(a && a.closest && a.closest('.ag-card'))]);
    }); return true; })()"""

# the numbers of the front's checked choices, sorted
CHECKED_CHOICES = """[].map.call(document.querySelectorAll('.ag-front [aria-checked="true"]'),
    function (e) { return +e.dataset.choice; }).sort()"""

# the number of the choice that has the focus, 0 if none has
FOCUSED_CHOICE = (
    "+((document.activeElement.closest('.ag-choice') || {dataset: {}}).dataset.choice || 0)"
)
