"""`ankigen serve`: the preview, live. Pages as `preview` makes them, served from memory on
127.0.0.1 to its own pages alone, made again when a bank, the project file or an image
changes; every open page follows, keeping its place and the cards it had turned.

Standard library only: a threaded HTTP server, Server-Sent Events for the pages, and a
watch that compares the files' sizes and times ten times a second. A few hundred
`stat` calls cost far less than that, work the same on every system and in every
container, and need no native watcher. Nothing is written: not a package, not a page.
"""

from __future__ import annotations

import contextlib
import html
import http.server
import json
import mimetypes
import os
import stat
import sys
import tempfile
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path

from ankigen.bank.files import shown_path
from ankigen.bank.workspace import default_media_dir
from ankigen.core.errors import AnkigenError, Diagnostic, InvalidBanks
from ankigen.preview.pages import (
    DeckPage,
    Memo,
    Pages,
    mathjax_files,
    preview_pages,
    site_asset,
)

MATHJAX = dict(mathjax_files())
_LIVE = site_asset("live.js")

POLL_SECONDS = 0.1
"""How often the watch looks at the files."""

_EMPTY = '<!doctype html><html><head><meta charset="utf-8"></head><body class="pv"></body></html>'


@dataclass
class Site:
    """The pages as last made, and the problems of the last attempt to make them. Each
    page has a stamp that changes when it or the problems change: its open copies wait
    for that (`/__events?page=NAME`), then ask what changed (`/__cards`) and put it in."""

    decks: dict[str, DeckPage] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    problems: tuple[Diagnostic, ...] = ()
    version: int = 0
    made: dict[str, int] = field(default_factory=dict)
    """The version in which each page last changed."""
    problems_made: int = 0
    changed: threading.Condition = field(default_factory=threading.Condition)

    def publish(self, pages: Pages | None, problems: tuple[Diagnostic, ...]) -> None:
        """New pages (None: keep the last good ones) and problems; wakes every page."""
        with self.changed:
            self.version += 1
            if pages is not None:
                for name, deck in pages.decks.items():
                    if self.decks.get(name) != deck:
                        self.made[name] = self.version
                for name, body in pages.files.items():
                    if self.files.get(name) != body:
                        self.made[name] = self.version
                self.decks, self.files = pages.decks, pages.files
            if problems != self.problems:
                self.problems, self.problems_made = problems, self.version
            self.changed.notify_all()

    def stamp(self, name: str) -> str:
        with self.changed:
            return f"{self.made.get(name, 0)}.{self.problems_made}"

    def banner(self) -> str:
        with self.changed:
            problems = self.problems
        if not problems:
            return ""
        lines = "\n".join(html.escape(str(p)) for p in problems)
        return f'<pre class="pv-problems" role="alert">{lines}</pre>'

    def page(self, name: str) -> bytes | None:
        """A file of the site; a page with the problems and the script that follows them."""
        with self.changed:
            deck, body, stamp = self.decks.get(name), self.files.get(name), self.stamp(name)
        banner = self.banner()
        live = "<script>" + _LIVE.replace('"STAMP"', f'"{stamp}"') + "</script>"
        if deck is not None:
            return deck.html(banner, live).encode("utf-8")
        if body is None and name == "index.html":  # nothing good made yet: the problems
            text = _EMPTY
        elif body is None or not name.endswith(".html"):
            return body
        else:
            text = body.decode("utf-8")
        text = text.replace('<body class="pv">', f'<body class="pv">{banner}', 1)
        return text.replace("</body>", f"{live}</body>", 1).encode("utf-8")

    def cards(self, name: str, items: list[str] | None) -> dict[str, object] | None:
        """What a deck's open page needs to follow it (None: no such deck): its stamp,
        problems, header and cards by item and digest; with `items`, those cards whole."""
        with self.changed:
            deck, stamp = self.decks.get(name), self.stamp(name)
        if deck is None:
            return None
        if items is not None:
            wanted = set(items)
            return {"sections": {c.item: c.html for c in deck.cards if c.item in wanted}}
        return {
            "stamp": stamp,
            "title": deck.title,
            "problems": self.banner(),
            "header": deck.header,
            "cards": [[card.item, card.digest] for card in deck.cards],
        }

    def wait(self, name: str, seen: str, timeout: float) -> str:
        """The page's stamp, once it is not `seen` (or after `timeout`)."""
        with self.changed:
            self.changed.wait_for(lambda: self.stamp(name) != seen, timeout)
            return self.stamp(name)


def snapshot(folders: list[Path]) -> dict[str, tuple[int, int, int]]:
    """Each file's kind, size and modification time, under the folders that exist, and
    each folder's and odd entry's (a link to nothing, a folder named like a bank): lint
    reports those, and the pages must see them come and go. A folder or file that goes
    while it is looked at (`git stash -u`, `rm -rf`) is simply not there: the next look
    sees what is."""
    seen: dict[str, tuple[int, int, int]] = {}

    def note(path: str) -> None:
        try:
            status = os.stat(path)
        except OSError:
            try:
                status = os.lstat(path)  # a link to nothing, or to itself
            except OSError:
                return
        kind = stat.S_IFMT(status.st_mode)
        size = status.st_size if kind == stat.S_IFREG else 0
        seen[path] = (kind, size, status.st_mtime_ns)

    for folder in map(str, folders):
        note(folder)
        # os.walk passes over folders it cannot list (gone, not allowed) and, as the
        # watch did before, does not follow links to folders
        for parent, folders_in, names in os.walk(folder):
            for name in [*names, *folders_in]:
                note(os.path.join(parent, name))
    return seen


def failure(banks_dir: Path, error: Exception) -> Diagnostic:
    """What the pages show, and the terminal prints, for an attempt that failed other
    than with the banks' own problems: the banks' folder gone, a file gone while it was
    read, or a bug."""
    where = shown_path(banks_dir)
    if isinstance(error, AnkigenError):
        message = str(error).removeprefix(f"{where}: ")
    elif isinstance(error, OSError) and error.strerror:
        message = f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    else:
        message = f"{type(error).__name__}: {error}"
        message = f"the pages could not be made ({message}); the watch goes on"
    return Diagnostic(where, 0, "error", message)


def refusal(headers: Message, port: int) -> tuple[int, str] | None:
    """Why a request is not answered (status, reason), or None. Only the names this
    server has: a page on another domain whose name is then pointed at 127.0.0.1 (DNS
    rebinding) sends its own in `Host`. And only its own pages: a browser names the
    origin of a cross-origin request (`Origin`) and says when a request comes from
    another site (`Sec-Fetch-Site`), where a link that opens a page reads nothing."""
    hosts = headers.get_all("Host") or []
    if len(hosts) != 1:
        return 400, "exactly one Host header is required"  # RFC 9112, 3.2
    host = hosts[0].strip().lower()
    names = {f"127.0.0.1:{port}", f"localhost:{port}"}
    if port == 80:  # the default port, which browsers leave out
        names |= {"127.0.0.1", "localhost"}
    if host not in names:
        return 421, "this server answers only to 127.0.0.1 and localhost on its port"
    origin = headers.get("Origin")
    if origin is not None and origin.strip().lower() != f"http://{host}":
        return 403, "requests from other origins are refused"
    opened = headers.get("Sec-Fetch-Mode") == "navigate" and (
        headers.get("Sec-Fetch-Dest") == "document"
    )
    if headers.get("Sec-Fetch-Site") == "cross-site" and not opened:
        return 403, "requests from other sites are refused"
    return None


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """One request failed (a bug, or a client gone): one line on the terminal, not
        socketserver's traceback; the server goes on."""
        error = sys.exc_info()[1]
        if os.environ.get("ANKIGEN_DEBUG"):
            super().handle_error(request, client_address)  # type: ignore[arg-type]
        elif not isinstance(error, ConnectionError):
            print(f"error: a request failed ({type(error).__name__}: {error})", file=sys.stderr)


class _Handler(http.server.BaseHTTPRequestHandler):
    site: Site
    stopping: threading.Event
    port: int

    def log_message(self, format: str, *args: object) -> None:
        pass  # the terminal shows problems, not every request

    def do_GET(self) -> None:
        refused = refusal(self.headers, self.port)
        if refused is None and not self.path.startswith("/"):
            refused = 400, "a path, please"  # not a proxy: no other server's URL
        if refused is not None:
            self.send_error(*refused)
            return
        path, _, query = self.path.partition("?")
        path = urllib.parse.unquote(path.lstrip("/")) or "index.html"
        asked = urllib.parse.parse_qs(query)
        page = asked.get("page", ["index.html"])[0]
        if path == "__events":
            self._events(page)
            return
        if path == "__cards":
            self._cards(page, asked.get("items"))
            return
        if path in MATHJAX:  # the same for as long as this ankigen is installed
            self._send(MATHJAX[path].read_bytes(), _media_type(path), "max-age=86400")
            return
        body = self.site.page(path)
        if body is None:
            self.send_error(404, "no such page")
            return
        self._send(body, _media_type(path), "no-store")

    def _answer(self, kind: str, caching: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", caching)
        # no page of another origin reads these, even as an image or a script, whose
        # requests name no origin; and none is read as other than its type
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("X-Content-Type-Options", "nosniff")

    def _send(self, body: bytes, kind: str, caching: str) -> None:
        self._answer(kind, caching)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _cards(self, page: str, items: list[str] | None) -> None:
        try:
            wanted = None if items is None else json.loads(items[0])
            valid = wanted is None or (
                isinstance(wanted, list) and all(isinstance(i, str) for i in wanted)
            )
        except (ValueError, RecursionError):  # JSON nested deeper than Python recurses
            valid = False
        if not valid:
            self.send_error(400, "items: a JSON list of item ids")
            return
        found = self.site.cards(page, wanted)
        if found is None:
            self.send_error(404, "no such deck")
            return
        body = json.dumps(found, ensure_ascii=False).encode("utf-8")
        self._send(body, "application/json", "no-store")

    def _events(self, page: str) -> None:
        self._answer("text/event-stream", "no-store")
        self.end_headers()
        stamp = ""
        try:
            while not self.stopping.is_set():
                stamp = self.site.wait(page, stamp, 15)
                self.wfile.write(f"data: {stamp}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page went away


def _media_type(name: str) -> str:
    if name.endswith(".html"):
        return "text/html; charset=utf-8"
    if name.endswith(".js"):
        return "text/javascript; charset=utf-8"
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


class Watch:
    """Makes the pages again whenever a watched file changes. Nothing that one round
    meets ends it: it is told on the terminal and on every page, and the next round
    looks again. (A watch that died left the server up, every page stale for good, and
    said nothing on the page: the banks' folder gone for a moment, as `git stash -u`
    does, was enough.)"""

    def __init__(
        self,
        site: Site,
        banks_dir: Path,
        media: Path | None,
        cache: Path,
        report: Callable[[tuple[Diagnostic, ...]], None],
        stopping: threading.Event,
    ) -> None:
        self.site, self.banks_dir, self.media, self.cache = site, banks_dir, media, cache
        self.report, self.stopping = report, stopping
        self.watched = [banks_dir, media or default_media_dir(banks_dir)]
        self.memo = Memo()
        self.seen = snapshot(self.watched)  # before the first making: a save during it counts
        self.problems: tuple[Diagnostic, ...] = ()
        """The last making's problems."""
        self.failed: Diagnostic | None = None
        """A round's own failure, while the pages show it."""

    def make(self, first: bool = False) -> None:
        """The pages made again and shown, or the problems that stopped them. The first
        making stops `serve` on an error other than the banks' (no folder of banks)."""
        pages = None
        try:
            pages = preview_pages(self.banks_dir, self.media, self.cache, self.memo)
            self.problems = ()
        except InvalidBanks as problems:
            self.problems = tuple(problems.diagnostics)
        except Exception as error:  # any: the pages keep the last good cards and say why
            if first:
                raise
            if self.stopping.is_set():
                return  # its scratch folder went as the server stopped: nothing to tell
            self.problems = (failure(self.banks_dir, error),)
        self.site.publish(pages, self.problems)
        self.report(self.problems)

    def round(self) -> None:
        try:
            now = snapshot(self.watched)
            if now != self.seen:
                self.seen = now
                self.make()
            elif self.failed is not None:  # looked again without failing: back as it was
                self.site.publish(None, self.problems)
            self.failed = None
        except Exception as error:  # any, or the watch ends (see the class)
            problem = failure(self.banks_dir, error)
            if problem != self.failed:  # once, not ten times a second
                self.failed = problem
                self.site.publish(None, (problem,))
                self.report((problem,))

    def run(self) -> None:
        while not self.stopping.wait(POLL_SECONDS):
            # telling the terminal failed (its pipe closed?): the pages have shown it
            with contextlib.suppress(Exception):
                self.round()


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
    handler: type[_Handler] = type("Handler", (_Handler,), {"site": site, "stopping": stopping})
    try:
        server = _Server(("127.0.0.1", port), handler)
    except OSError as error:
        raise AnkigenError(f"cannot listen on 127.0.0.1:{port}: {error.strerror}") from None
    server.daemon_threads = True
    bound = server.server_address[1]
    handler.port = bound
    with tempfile.TemporaryDirectory(prefix="ankigen-serve-") as cache:
        watch = Watch(site, banks_dir, media, Path(cache), report, stopping)
        watch.make(first=True)
        watcher = threading.Thread(target=watch.run, name="ankigen-watch", daemon=True)
        listener = threading.Thread(target=server.serve_forever, name="ankigen-serve", daemon=True)
        watcher.start()
        listener.start()

        def stop() -> None:
            stopping.set()
            with site.changed:
                site.changed.notify_all()
            server.shutdown()
            server.server_close()

        try:
            yield Serving(f"http://127.0.0.1:{bound}/", stop)
        finally:
            stop()
