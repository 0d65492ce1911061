"""A client for the AnkiConnect add-on, which `push` and `pull` talk to.

AnkiConnect listens on http://127.0.0.1:8765 and takes a JSON request
`{"action", "version", "params"}`; with version 6 every reply is
`{"result": ..., "error": ...}`. Every way a request can fail becomes an
`AnkiConnectError` that says what to do, a result of the wrong shape too: whatever
answers at the URL is not trusted to be AnkiConnect.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import re
import socket
import threading
import urllib.parse
from pathlib import Path
from typing import Any

from ankigen.core.errors import AnkigenError
from ankigen.core.jsondata import parse_json

DEFAULT_URL = "http://127.0.0.1:8765"
API_VERSION = 6
"""The AnkiConnect API version ankigen speaks, and the oldest it accepts."""
CHECK_TIMEOUT = 10.0
IMPORT_TIMEOUT = 600.0
ADDON_HINT = "AnkiConnect (add-on code 2055492159, Tools > Add-ons > Get Add-ons in Anki)"


class AnkiConnectError(AnkigenError):
    """Anki, or what answers at the URL, did not do what was asked."""


class BadUrl(AnkiConnectError):
    """The --url given cannot be used: a usage error."""

    exit_code = 2


def is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class AnkiConnect:
    """A client for one AnkiConnect URL."""

    def __init__(
        self, url: str = DEFAULT_URL, key: str | None = None, allow_remote: bool = False
    ) -> None:
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port
        except ValueError as error:
            raise BadUrl(f"--url {_without_credentials(url)!r} is not a URL: {error}") from None
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise BadUrl(
                f"--url {_without_credentials(url)!r} must start with http:// or https:// "
                "and name a host"
            )
        if not allow_remote and not is_loopback(parts.hostname):
            raise BadUrl(
                f"--url names {parts.hostname}, not this machine: AnkiConnect would be sent "
                "the API key and every package's path there. Pass --allow-remote if you mean it"
            )
        self.scheme, self.host, self.port = parts.scheme.lower(), parts.hostname, port
        self.local = is_loopback(parts.hostname)
        self.path = parts.path or "/"
        self.url = _without_credentials(url)
        """The URL as shown and recorded: never with a user name or password."""
        self.key = key

    def call(self, action: str, timeout: float, **params: Any) -> dict[str, Any]:
        """One request; every way it can fail becomes a AnkiConnectError saying what to do."""
        request: dict[str, Any] = {"action": action, "version": API_VERSION, "params": params}
        if self.key is not None:
            request["key"] = self.key
        body = json.dumps(request).encode("utf-8")
        status, reason, raw = self._post(body, timeout)
        if status != 200:
            raise AnkiConnectError(
                f"{self.url} answered HTTP {status} {reason}: it is not AnkiConnect, or "
                f"AnkiConnect refused this client. Install {ADDON_HINT}, restart Anki, or pass "
                "--url with AnkiConnect's address"
            )
        try:
            reply = parse_json(raw.decode("utf-8"))
        except ValueError:  # UnicodeDecodeError too
            reply = None
        if not (isinstance(reply, dict) and set(reply) == {"result", "error"}):
            shown = raw[:80].decode("utf-8", "replace")
            raise AnkiConnectError(
                f"something answers at {self.url}, but not AnkiConnect (it replied {shown!r}). "
                f"Install {ADDON_HINT} in Anki, or pass --url with AnkiConnect's address"
            )
        return reply

    def _post(self, body: bytes, timeout: float) -> tuple[int, str, bytes]:
        kind = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        connection = kind(self.host, self.port, timeout=timeout)
        # one deadline for the whole request: a server that trickles a byte at a time
        # would reset a timeout that is per read for ever
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            sock = connection.sock
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

        deadline = threading.Timer(timeout, expire)
        deadline.daemon = True
        deadline.start()
        try:
            connection.request("POST", self.path, body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, response.reason, response.read(16 * 1024 * 1024)
        except ConnectionRefusedError:
            raise AnkiConnectError(
                f"nothing answers at {self.url}: Anki is not running, or {ADDON_HINT} "
                "is not installed. Start Anki with the add-on and try again"
            ) from None
        except (TimeoutError, http.client.HTTPException, OSError) as error:
            if expired.is_set() or isinstance(error, TimeoutError):
                raise AnkiConnectError(
                    f"{self.url} did not answer within {timeout:.0f} s: is Anki busy or "
                    "showing a dialog? Finish it in Anki and try again"
                ) from None
            if isinstance(error, (http.client.HTTPException, ConnectionError)):
                raise AnkiConnectError(
                    f"{self.url} closed the connection ({error}): it is not AnkiConnect. "
                    f"Install {ADDON_HINT}, or pass --url with AnkiConnect's address"
                ) from None
            raise AnkiConnectError(f"cannot reach {self.url}: {error.strerror or error}") from None
        finally:
            deadline.cancel()
            connection.close()

    def version(self) -> int:
        """AnkiConnect's API version; a AnkiConnectError unless it is recent enough."""
        reply = self.call("version", CHECK_TIMEOUT)
        if reply["error"] is not None:
            raise self.refused(reply["error"], "the version request")
        version = reply["result"]
        if isinstance(version, str) and version.strip().isdecimal():
            version = int(version)  # some builds answer "6"
        if not isinstance(version, int) or isinstance(version, bool):
            raise self.misshapen("version", version, "a version number")
        if version < API_VERSION:
            raise AnkiConnectError(
                f"AnkiConnect at {self.url} speaks API version {version}; ankigen needs "
                f"{API_VERSION} or newer. Update it in Anki: Tools > Add-ons > Check for Updates"
            )
        return version

    def misshapen(self, action: str, result: object, expected: str) -> AnkiConnectError:
        """The error for a result that is not what AnkiConnect answers to `action`."""
        return AnkiConnectError(
            f"AnkiConnect at {self.url} answered {action} with {_shown(result)}; "
            f"expected {expected}"
        )

    def deck_names(self) -> list[str]:
        """The names of Anki's decks."""
        names = self.result("deckNames", CHECK_TIMEOUT)
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise self.misshapen("deckNames", names, "a list of deck names")
        return names

    def filtered_decks_holding(self, deck: str) -> list[str]:
        """The filtered decks (Custom Study's, say) that hold cards of `deck` now: Anki's
        exporter takes a deck's cards by the deck they are in, which is then another."""
        query = f'deck:"{_searched(deck)}" deck:filtered'
        cards = self.result("findCards", CHECK_TIMEOUT, query=query)
        if not isinstance(cards, list) or not all(type(card) is int for card in cards):
            raise self.misshapen("findCards", cards, "a list of card ids")
        if not cards:
            return []
        found = self.result("cardsInfo", CHECK_TIMEOUT, cards=cards)
        if not isinstance(found, list) or not all(
            isinstance(card, dict) and isinstance(card.get("deckName"), str) for card in found
        ):
            raise self.misshapen("cardsInfo", found, "a list of cards with their deckName")
        return sorted({card["deckName"] for card in found} - {deck})

    def refused(self, error: object, what: str) -> AnkiConnectError:
        text = error if isinstance(error, str) else _shown(error)
        text = text if len(text) <= 300 else text[:297] + "..."
        if "api key" in text.lower():
            return AnkiConnectError(
                f"AnkiConnect refused {what}: {text}. It is set up with an API key: "
                "pass it with --api-key (AnkiConnect's apiKey setting)"
            )
        return AnkiConnectError(f"AnkiConnect refused {what}: {text}")

    def result(self, action: str, timeout: float, **params: Any) -> Any:
        """The result of one request; an AnkiConnectError if AnkiConnect refused it."""
        reply = self.call(action, timeout, **params)
        if reply["error"] is not None:
            raise self.refused(reply["error"], f"the {action} request")
        return reply["result"]

    def export_package(self, deck: str, path: Path) -> None:
        """The deck (its notes, without scheduling) exported by Anki to `path`, which
        must be on this machine: Anki writes it."""
        done = self.result(
            "exportPackage", IMPORT_TIMEOUT, deck=deck, path=str(path.resolve()), includeSched=False
        )
        if done is not True:
            raise AnkiConnectError(
                f"Anki did not export the deck {deck!r} (AnkiConnect replied {_shown(done)}): "
                "is a profile open? Open your profile in Anki and try again"
            )

    def import_package(self, path: Path) -> dict[str, Any]:
        absolute = path.resolve()
        reply = self.call("importPackage", IMPORT_TIMEOUT, path=str(absolute))
        if reply["error"] is not None:
            raise self.refused(reply["error"], f"{path}")
        if reply["result"] is not True:
            raise AnkiConnectError(
                f"Anki did not import {path} (AnkiConnect replied {_shown(reply)}): "
                "is a profile open? Open your profile in Anki and try again"
            )
        return reply


def _searched(name: str) -> str:
    """A deck name as Anki's search reads it inside quotes: its wildcards (`*`, `_`), quotes
    and backslashes escaped."""
    for special in '\\"*_':
        name = name.replace(special, "\\" + special)
    return name


def _shown(value: object) -> str:
    """A result as AnkiConnect sent it (JSON), cut short: whatever answers may send
    megabytes."""
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _without_credentials(url: str) -> str:
    """The URL without a user name or password, which are never shown or stored."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return re.sub(r"//[^/@]*@", "//", url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
