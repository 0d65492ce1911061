"""`ankigen serve`: the preview, live. Pages as `preview` makes them, served from memory on
127.0.0.1, made again when a bank, the project file or an image changes; every open page
follows, keeping its place and the cards it had turned.

Standard library only: a threaded HTTP server, Server-Sent Events for the pages, and a
watch that compares the files' sizes and times four times a second. A few hundred
`stat` calls cost far less than that, work the same on every system and in every
container, and need no native watcher. Nothing is written: not a package, not a page.
"""

from __future__ import annotations

import html
import http.server
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ankigen.bank.workspace import default_media_dir
from ankigen.core.errors import AnkigenError, Diagnostic, InvalidBanks
from ankigen.preview import preview_pages

POLL_SECONDS = 0.25
"""How often the watch looks at the files."""

# What each page gets: the problems (as `lint` prints them), and a script that reloads
# the page when the site changes, with its scroll position and turned cards kept.
_LIVE = """
<style>
.pv-problems { margin: 0; padding: 0.8rem 1rem; background: #fbe9e7; color: #7a1c14;
  font: 14px/1.5 ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; }
</style>
<script>
(function () {
  var KEY = "ankigen-serve:" + location.pathname;
  var kept = null;
  try {
    kept = JSON.parse(sessionStorage.getItem(KEY));
    sessionStorage.removeItem(KEY);
  } catch (e) { kept = null; }
  if (kept) {
    (kept.turned || []).forEach(function (item) {
      var button = document.querySelector('.pv-card[data-item="' + item + '"] .pv-flip');
      if (button) { button.click(); }
    });
    window.scrollTo(0, kept.y || 0);
  }
  var events = new EventSource("/__events");
  events.onmessage = function (event) {
    if (event.data === String(VERSION)) { return; }
    var turned = [].filter.call(document.querySelectorAll(".pv-card"), function (card) {
      return card.querySelector(".ag-back");
    }).map(function (card) { return card.getAttribute("data-item"); });
    var place = JSON.stringify({ y: window.scrollY, turned: turned });
    try { sessionStorage.setItem(KEY, place); } catch (e) { /* the place is lost, not the page */ }
    events.close();
    location.reload();
  };
})();
</script>
"""


_EMPTY = b'<!doctype html><html><head><meta charset="utf-8"></head><body class="pv"></body></html>'


@dataclass
class Site:
    """The pages as last made, and the problems of the last attempt to make them."""

    pages: dict[str, bytes] = field(default_factory=dict)
    problems: tuple[Diagnostic, ...] = ()
    version: int = 0
    changed: threading.Condition = field(default_factory=threading.Condition)

    def publish(self, pages: dict[str, bytes] | None, problems: tuple[Diagnostic, ...]) -> None:
        """New pages (None: keep the last good ones) and problems; wakes every page."""
        with self.changed:
            if pages is not None:
                self.pages = pages
            self.problems = problems
            self.version += 1
            self.changed.notify_all()

    def page(self, name: str) -> bytes | None:
        with self.changed:
            body, problems, version = self.pages.get(name), self.problems, self.version
        if body is None and name == "index.html":  # nothing good made yet: the problems
            body = _EMPTY
        if body is None or not name.endswith(".html"):
            return body
        banner = ""
        if problems:
            lines = "\n".join(html.escape(str(p)) for p in problems)
            banner = f'<pre class="pv-problems" role="alert">{lines}</pre>'
        live = _LIVE.replace("VERSION", str(version))
        text = body.decode("utf-8")
        text = text.replace(
            '<body class="card card1 pv">', f'<body class="card card1 pv">{banner}', 1
        )
        text = text.replace('<body class="pv">', f'<body class="pv">{banner}', 1)
        return text.replace("</body>", f"{live}</body>", 1).encode("utf-8")

    def wait(self, seen: int, timeout: float) -> int:
        """The version, once it is not `seen` (or after `timeout`)."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != seen, timeout)
            return self.version


def snapshot(folders: list[Path]) -> dict[str, tuple[int, int]]:
    """Each file's size and modification time, under the folders that exist."""
    seen: dict[str, tuple[int, int]] = {}
    for folder in folders:
        if folder.is_file():
            status = folder.stat()
            seen[str(folder)] = (status.st_size, status.st_mtime_ns)
            continue
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if path.is_file():
                status = path.stat()
                seen[str(path)] = (status.st_size, status.st_mtime_ns)
    return seen


class _Handler(http.server.BaseHTTPRequestHandler):
    site: Site
    stopping: threading.Event

    def log_message(self, format: str, *args: object) -> None:
        pass  # the terminal shows problems, not every request

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].lstrip("/") or "index.html"
        if path == "__events":
            self._events()
            return
        body = self.site.page(path)
        if body is None:
            self.send_error(404, "no such page")
            return
        kind = "text/html; charset=utf-8" if path.endswith(".html") else _image_type(path)
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _events(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        version = -1
        try:
            while not self.stopping.is_set():
                version = self.site.wait(version, 15)
                self.wfile.write(f"data: {version}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page went away


def _image_type(name: str) -> str:
    import mimetypes

    return mimetypes.guess_type(name)[0] or "application/octet-stream"


@dataclass(frozen=True)
class Serving:
    url: str
    stop: Callable[[], None]


def serve(
    banks_dir: Path,
    media: Path | None,
    port: int,
    report: Callable[[tuple[Diagnostic, ...]], None],
) -> Iterator[Serving]:
    """Serve the preview until the caller stops iterating (Ctrl-C): yields once, when the
    server listens. `report` hears each attempt's problems (empty: the pages are new)."""
    site = Site()
    stopping = threading.Event()
    handler = type("Handler", (_Handler,), {"site": site, "stopping": stopping})
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as error:
        raise AnkigenError(f"cannot listen on 127.0.0.1:{port}: {error.strerror}") from None
    server.daemon_threads = True
    media_dir = media or default_media_dir(banks_dir)
    watched = [banks_dir, media_dir]
    with tempfile.TemporaryDirectory(prefix="ankigen-serve-") as cache:

        def make() -> None:
            try:
                site.publish(preview_pages(banks_dir, media, Path(cache)).files, ())
            except InvalidBanks as problems:
                site.publish(None, tuple(problems.diagnostics))
            report(site.problems)

        def watch() -> None:
            seen = snapshot(watched)
            while not stopping.wait(POLL_SECONDS):
                now = snapshot(watched)
                if now != seen:
                    seen = now
                    make()

        make()
        watcher = threading.Thread(target=watch, name="ankigen-watch", daemon=True)
        listener = threading.Thread(target=server.serve_forever, name="ankigen-serve", daemon=True)
        watcher.start()
        listener.start()

        def stop() -> None:
            stopping.set()
            with site.changed:
                site.changed.notify_all()
            server.shutdown()
            server.server_close()

        bound = server.server_address[1]
        try:
            yield Serving(f"http://127.0.0.1:{bound}/", stop)
        finally:
            stop()
