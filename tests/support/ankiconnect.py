"""Stand-ins for AnkiConnect in tests: how one answers a request."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


def asked(handler: BaseHTTPRequestHandler) -> dict[str, Any]:
    """The request's JSON: its action and params."""
    found: dict[str, Any] = json.loads(
        handler.rfile.read(int(handler.headers.get("Content-Length", "0")))
    )
    return found


def answer(handler: BaseHTTPRequestHandler, result: Any, error: Any = None) -> None:
    """AnkiConnect's reply: `{"result": ..., "error": ...}`."""
    reply = json.dumps({"result": result, "error": error}).encode()
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(reply)))
    handler.end_headers()
    handler.wfile.write(reply)
