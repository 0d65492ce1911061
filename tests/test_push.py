"""`ankigen push`: packages handed to Anki through AnkiConnect, and every way that fails.

The error paths run against real sockets: a free port nobody listens on, a real
HTTP server that is not AnkiConnect, one that hangs up. The protocol path runs
against a small HTTP server that answers as AnkiConnect does (its request and
reply shapes, its version and API-key rules, read from the add-on's source in
../shared/vendor/anki-connect) and imports into the real Anki backend. The
test against the real add-on inside Anki desktop needs the desktop harness.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer, SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import SRC, AnkiCollection, invoke, item, write_bank
from tests.support.net import free_port


class Serving:
    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.thread = threading.Thread(target=server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


class AnkiConnectLike(BaseHTTPRequestHandler):
    """Answers as AnkiConnect's web.py and handler() do, importing into a real collection."""

    collection: AnkiCollection
    api_version = 6
    api_key: str | None = None
    requests: list[dict[str, Any]]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        request = json.loads(body)
        self.requests.append(request)
        action, params = request.get("action"), request.get("params", {})
        result: Any = None
        error: str | None = None
        if request.get("key") != self.api_key:
            error = "valid api key must be provided"
        elif action == "version":
            result = self.api_version
        elif action == "importPackage":
            path = Path(params["path"])
            if not path.is_absolute():
                error = "path must be absolute"  # Anki's importer needs it
            else:
                self.collection.import_package(path)
                result = True
        else:
            error = "unsupported action"
        reply = json.dumps({"result": result, "error": error}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


@pytest.fixture
def anki(collection: AnkiCollection) -> Iterator[tuple[Serving, type[AnkiConnectLike]]]:
    handler = type("Handler", (AnkiConnectLike,), {"collection": collection, "requests": []})
    serving = Serving(HTTPServer(("127.0.0.1", 0), handler))
    yield serving, handler
    serving.close()


def test_push_builds_and_imports_only_what_changed(
    project: Path,
    runner: CliRunner,
    anki: tuple[Serving, type[AnkiConnectLike]],
    collection: AnkiCollection,
) -> None:
    serving, handler = anki
    write_bank(project / "banks", "demo", "en")
    write_bank(project / "banks", "other", "de")
    result = invoke(runner, "push", "--url", serving.url)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        'pushed out/demo.en.apkg: Anki replied {"result": true, "error": null}',
        'pushed out/other.de.apkg: Anki replied {"result": true, "error": null}',
        "2 packages pushed, 0 unchanged",
    ]
    assert f"AnkiConnect 6 at {serving.url}" in result.stderr
    assert len(collection.notes()) == 4
    imports = [r for r in handler.requests if r["action"] == "importPackage"]
    assert all(Path(r["params"]["path"]).is_absolute() for r in imports)
    assert all(r["version"] == 6 for r in handler.requests)

    # nothing changed: nothing is sent again
    result = invoke(runner, "push", "--url", serving.url)
    assert result.stdout.splitlines()[-1] == "0 packages pushed, 2 unchanged"
    # one bank changed: only its package goes
    write_bank(project / "banks", "other", "de", items=[item("one"), item("two", 2), item("new")])
    result = invoke(runner, "push", "--url", serving.url)
    assert result.stdout.splitlines() == [
        "unchanged since the last push: out/demo.en.apkg",
        'pushed out/other.de.apkg: Anki replied {"result": true, "error": null}',
        "1 package pushed, 1 unchanged",
    ]
    assert len(collection.notes()) == 5
    result = invoke(runner, "push", "--url", serving.url, "--all")
    assert result.stdout.splitlines()[-1] == "2 packages pushed, 0 unchanged"


def test_nothing_listening(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    url = f"http://127.0.0.1:{free_port()}"
    result = invoke(runner, "push", "--url", url)
    assert result.exit_code == 1
    assert result.output == (
        f"error: nothing answers at {url}: Anki is not running, or AnkiConnect (add-on code "
        "2055492159, Tools > Add-ons > Get Add-ons in Anki) is not installed. Start Anki with "
        "the add-on and try again\n"
    )
    assert not (project / "out").exists()


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_web_server_that_is_not_ankiconnect(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    serving = Serving(HTTPServer(("127.0.0.1", 0), QuietFiles))
    try:
        result = invoke(runner, "push", "--url", serving.url)
    finally:
        serving.close()
    assert result.exit_code == 1
    assert result.output.startswith(
        f"error: {serving.url} answered HTTP 501 Unsupported method ('POST'): it is not "
        "AnkiConnect, or AnkiConnect refused this client."
    )


class HtmlEverywhere(BaseHTTPRequestHandler):
    body = b"<html>router login</html>"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.body
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class DeepJson(HtmlEverywhere):
    body = b'{"result": ' + b"[" * 10_000 + b"]" * 10_000 + b', "error": null}'


@pytest.mark.parametrize(
    ("handler", "replied"),
    [(HtmlEverywhere, " (it replied '<html>router login</html>')"), (DeepJson, "")],
    ids=["html", "nested-json"],
)
def test_a_server_that_answers_but_not_as_ankiconnect(
    project: Path, handler: type[HtmlEverywhere], replied: str
) -> None:
    write_bank(project / "banks")
    serving = Serving(HTTPServer(("127.0.0.1", 0), handler))
    # a process of its own, as a user runs it: how deep JSON can nest before the parser
    # gives up is Python's recursion limit, which Hypothesis raises for a while in this one
    try:
        result = subprocess.run(
            [sys.executable, "-m", "ankigen", "push", "--url", serving.url],
            cwd=project,
            env={**os.environ, "PYTHONPATH": str(SRC)},
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        serving.close()
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(
        f"error: something answers at {serving.url}, but not AnkiConnect{replied}"
    )


def test_a_server_that_hangs_up(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def hang_up() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        result = invoke(runner, "push", "--url", url)
    finally:
        thread.join(10)
        listener.close()
    assert result.exit_code == 1
    assert result.output.startswith(f"error: {url} closed the connection")
    assert "it is not AnkiConnect" in result.output


def test_version_too_old(
    project: Path, runner: CliRunner, anki: tuple[Serving, type[AnkiConnectLike]]
) -> None:
    serving, handler = anki
    handler.api_version = 5
    write_bank(project / "banks")
    result = invoke(runner, "push", "--url", serving.url)
    assert result.exit_code == 1
    assert result.output == (
        f"error: AnkiConnect at {serving.url} speaks API version 5; ankigen needs 6 or newer. "
        "Update it in Anki: Tools > Add-ons > Check for Updates\n"
    )


def test_refused_without_the_api_key(
    project: Path,
    runner: CliRunner,
    anki: tuple[Serving, type[AnkiConnectLike]],
    collection: AnkiCollection,
) -> None:
    serving, handler = anki
    handler.api_key = "s3cret"
    write_bank(project / "banks")
    result = invoke(runner, "push", "--url", serving.url)
    assert result.exit_code == 1
    assert result.output == (
        "error: AnkiConnect refused the version request: valid api key must be provided. "
        "It is set up with an API key: pass it with --api-key (AnkiConnect's apiKey setting)\n"
    )
    result = invoke(runner, "push", "--url", serving.url, "--api-key", "s3cret")
    assert result.exit_code == 0, result.output
    assert len(collection.notes()) == 2


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("localhost:8765", "must start with http:// or https://"),
        ("http://[::1", "is not a URL"),
        ("http://127.0.0.1:port", "is not a URL"),
        ("ftp://127.0.0.1:8765", "must start with http:// or https://"),
    ],
)
def test_a_bad_url_is_a_usage_error(
    runner: CliRunner, project: Path, url: str, message: str
) -> None:
    result = invoke(runner, "push", "--url", url)
    assert result.exit_code == 2
    assert message in result.output
    assert "internal error" not in result.output


def test_a_url_scheme_in_capitals_is_a_url(
    project: Path, runner: CliRunner, anki: tuple[Serving, type[AnkiConnectLike]]
) -> None:
    serving, _ = anki
    write_bank(project / "banks")
    result = invoke(runner, "push", "--url", serving.url.replace("http://", "HTTP://"))
    assert result.exit_code == 0, result.output


def test_another_machine_is_refused_unless_allowed(runner: CliRunner, project: Path) -> None:
    write_bank(project / "banks")
    result = invoke(runner, "push", "--url", "http://192.0.2.1:8765", "--api-key", "k")
    assert result.exit_code == 2
    assert "names 192.0.2.1, not this machine" in result.output
    assert "--allow-remote" in result.output


def test_credentials_in_the_url_are_never_shown_or_stored(
    project: Path, runner: CliRunner, anki: tuple[Serving, type[AnkiConnectLike]]
) -> None:
    serving, _ = anki
    write_bank(project / "banks")
    url = serving.url.replace("http://", "http://user:s3cret@")
    result = invoke(runner, "push", "--url", url)
    assert result.exit_code == 0, result.output
    assert "s3cret" not in result.output and "user" not in result.output
    record = (project / "out" / ".ankigen-pushed.json").read_text(encoding="utf-8")
    assert "s3cret" not in record and serving.url in record


def test_a_version_written_as_text_is_read_as_a_number(
    project: Path, runner: CliRunner, anki: tuple[Serving, type[AnkiConnectLike]]
) -> None:
    serving, handler = anki
    handler.api_version = "6"  # type: ignore[assignment]
    write_bank(project / "banks")
    result = invoke(runner, "push", "--url", serving.url)
    assert result.exit_code == 0, result.output
    assert f"AnkiConnect 6 at {serving.url}" in result.output


def test_a_server_that_trickles_is_given_up_on_at_one_deadline(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A byte every tenth of a second resets a timeout that is per read for ever; the
    request has one deadline instead. The server stops by itself after 20 s."""
    import time

    import ankigen.ankiconnect

    monkeypatch.setattr(ankigen.ankiconnect, "CHECK_TIMEOUT", 1.0)
    write_bank(project / "banks")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    sent: list[int] = []

    def trickle() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            with contextlib.suppress(OSError):
                for _ in range(200):
                    conn.sendall(b"H")
                    sent.append(1)
                    time.sleep(0.1)  # the hostile server's pace, not a wait for the test

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        result = invoke(runner, "push", "--url", url)
    finally:
        thread.join(30)
        listener.close()
    assert result.exit_code == 1
    assert f"error: {url} did not answer within 1 s" in result.output
    assert 0 < len(sent) < 200  # it was trickling, and was given up on before the end
