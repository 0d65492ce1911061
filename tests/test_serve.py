"""`ankigen serve`: a live preview in headless Chromium, the bank edited on disk."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import item, until, write_bank


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    """`ankigen serve` on a free port of a project with one bank; the process, its URL
    and the bank."""
    bank = write_bank(tmp_path / "banks", items=[item("one"), item("two", 2)])
    # its own temporary folder: what it leaves there is seen, and kept out of /tmp
    (tmp_path / "tmp").mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "ankigen", "serve", "banks", "--port", "0"],
        cwd=tmp_path,
        env=dict(os.environ, TMPDIR=str(tmp_path / "tmp")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(
        target=lambda: [lines.put(line) for line in process.stdout or ()], daemon=True
    )
    reader.start()
    try:
        first = lines.get(timeout=60)
        found = re.match(r"serving (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops\)", first)
        assert found, first
        yield process, found[1], bank
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        reader.join(10)  # at the end of the output, once the process is gone
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def listening(pid: int) -> list[str]:
    """The local addresses of the TCP sockets a process listens on (Linux /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd) if fd.is_symlink() else ""
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("tcp", "tcp6"):
        for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                found.append(fields[1])
    return found


def test_pages_follow_the_banks_and_show_their_problems(
    served: tuple[subprocess.Popen[str], str, Path], chromium: Any
) -> None:
    process, url, bank = served
    assert listening(process.pid) and all(
        address.startswith("0100007F:") for address in listening(process.pid)
    )  # 127.0.0.1 alone
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url + "demo.en.html")
    page.wait_for_selector('.pv-card[data-item="one"] .ag-front')
    page.click('.pv-card[data-item="one"] .pv-flip')  # turned: it stays turned
    page.click('.pv-card[data-item="two"] .pv-flip')
    # marks that a reload, or a card made again, would lose
    page.evaluate(
        """() => { window.pvSameDocument = true;
        document.querySelector('.pv-card[data-item="two"]').pvMark = 'kept'; }"""
    )
    page.set_viewport_size({"width": 800, "height": 300})
    page.evaluate("window.scrollTo(0, 120)")
    text = bank.read_text(encoding="utf-8")
    bank.write_text(text.replace("Question one?", "Question one, edited?"), encoding="utf-8")
    page.wait_for_function(
        "() => document.body.innerText.includes('Question one, edited?')", timeout=15000
    )
    assert page.is_visible('.pv-card[data-item="one"] .ag-back')
    assert page.evaluate(
        """() => [window.pvSameDocument, window.scrollY,
        document.querySelector('.pv-card[data-item="two"]').pvMark,
        !!document.querySelector('.pv-card[data-item="two"] .ag-back')]"""
    ) == [True, 120, "kept", True]
    # broken: the problem at its line, and the last good cards still there
    bank.write_text(text.replace("items:", "items: [", 1), encoding="utf-8")
    page.wait_for_selector(".pv-problems", timeout=15000)
    shown = page.inner_text(".pv-problems")
    assert re.search(r"banks/demo/en\.yaml:\d+: error: ", shown), shown
    assert page.is_visible('.pv-card[data-item="two"]')
    bank.write_text(text, encoding="utf-8")  # fixed: the problems go
    page.wait_for_function("() => !document.querySelector('.pv-problems')", timeout=15000)
    assert page.is_visible('.pv-card[data-item="two"]')
    assert errors == []
    assert not (bank.parent.parent.parent / "out").exists()  # nothing written
    process.send_signal(signal.SIGINT)
    assert process.wait(20) == 130
    stderr = process.stderr.read() if process.stderr else ""
    assert "Traceback" not in stderr and "interrupted" in stderr


@pytest.mark.parametrize(
    ("sent", "line", "status"),
    [(signal.SIGINT, "interrupted", 130), (signal.SIGTERM, "terminated", 143)],
    ids=["ctrl-c", "sigterm"],
)
def test_a_stopped_server_leaves_nothing_behind(
    served: tuple[subprocess.Popen[str], str, Path], sent: int, line: str, status: int
) -> None:
    """Its pages are made in a temporary folder, removed however it is stopped short of
    SIGKILL: SIGTERM (`kill`, an editor's task runner, systemd) as well as Ctrl-C."""
    process, _, bank = served
    scratch = bank.parents[2] / "tmp"
    assert [path.name[:14] for path in scratch.iterdir()] == ["ankigen-serve-"]
    process.send_signal(sent)
    assert process.wait(20) == status
    stderr = process.stderr.read() if process.stderr else ""
    assert stderr.strip().splitlines()[-1:] == [line], stderr
    assert list(scratch.iterdir()) == []


def test_hostile_card_requests_get_400_and_no_traceback(
    served: tuple[subprocess.Popen[str], str, Path],
) -> None:
    """`items=` nested deeper than Python recurses printed a RecursionError traceback on
    the author's terminal; other shapes than a list of ids were read as ids."""
    process, url, _ = served
    own = f"127.0.0.1:{urllib.parse.urlsplit(url).port}"
    port = int(urllib.parse.urlsplit(url).port or 0)
    for items in ["[" * 5000 + "]" * 5000, '{"a": 1}', "[1, 2]", '[["one"]]', "7", "[,"]:
        route = "/__cards?page=demo.en.html&items=" + urllib.parse.quote(items)
        assert ask(port, route, [("Host", own)])[0] == 400, items
    route = "/__cards?page=demo.en.html&items=" + urllib.parse.quote('["one"]')
    assert ask(port, route, [("Host", own)])[0] == 200
    process.send_signal(signal.SIGINT)
    assert process.wait(20) == 130
    stderr = process.stderr.read() if process.stderr else ""
    assert "Traceback" not in stderr and "Error" not in stderr, stderr


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    write_bank(tmp_path / "banks")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "ankigen", "serve", "banks", "--port", str(port)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_save_checks_and_renders_only_the_deck_it_changed(tmp_path: Path) -> None:
    """What serve keeps between saves: an unchanged bank's check and page are the very
    objects made before, and its open pages are not told of a change."""
    from ankigen.preview.pages import Memo, preview_pages
    from ankigen.serve import Site

    banks = tmp_path / "banks"
    write_bank(banks, "demo", "en", items=[item("one"), item("two", 2)])
    fr = write_bank(banks, "demo", "fr", items=[item("one"), item("two", 2)])
    memo, site = Memo(), Site()
    first = preview_pages(banks, None, tmp_path / "cache", memo)
    site.publish(first, ())
    checks = dict(memo.checks)
    stamps = {name: site.stamp(name) for name in ("demo.en.html", "demo.fr.html")}
    fr.write_text(fr.read_text(encoding="utf-8").replace("Question one?", "Une?"), "utf-8")
    second = preview_pages(banks, None, tmp_path / "cache", memo)
    site.publish(second, ())
    en_path, fr_path = str(banks / "demo" / "en.yaml"), str(fr)
    assert memo.checks[en_path] is checks[en_path]
    assert memo.checks[fr_path] is not checks[fr_path]
    assert second.decks["demo.en.html"] is first.decks["demo.en.html"]
    assert second.decks["demo.fr.html"] != first.decks["demo.fr.html"]
    assert site.stamp("demo.en.html") == stamps["demo.en.html"]
    assert site.stamp("demo.fr.html") != stamps["demo.fr.html"]
    # the project file's settings reach every deck: a change to it is a change to all
    (banks / "ankigen.toml").write_text('deck = "{topic} — {language}"\n', "utf-8")
    third = preview_pages(banks, None, tmp_path / "cache", memo)
    assert third.decks["demo.en.html"] is not second.decks["demo.en.html"]
    assert third.decks["demo.en.html"].title == "demo — en"


def test_a_save_identifies_the_language_of_the_changed_texts_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The untranslated check's verdicts outlive a save in `serve`: a translation still
    in English prose has every text judged by the language identifier once, and a save
    that changes one question asks it about that item alone. (A build forgets them
    after each bank, for memory: serve had forgotten them too, and a save at 10 x 1,000
    half-translated items took 0.75 s instead of 0.3.)"""
    import ankigen.text.langid
    from ankigen.preview.pages import Memo, preview_pages

    banks = tmp_path / "banks"
    count = 12
    english = [
        f"Which gradient shard does worker {n} hold after the all-reduce of step {n}?"
        for n in range(count)
    ]
    write_bank(
        banks, "demo", "en", items=[item(f"q{n}", question=english[n]) for n in range(count)]
    )
    # the German translation is half done: its questions are still English, reworded
    german = [text.replace("Which", "What") for text in english]
    de = write_bank(
        banks, "demo", "de", items=[item(f"q{n}", question=german[n]) for n in range(count)]
    )
    asked: list[str] = []
    identify = ankigen.text.langid.identify

    def noting(text: str, *rest: Any) -> Any:
        asked.append(text)
        return identify(text, *rest)

    monkeypatch.setattr(ankigen.text.langid, "identify", noting)
    memo = Memo()
    preview_pages(banks, None, tmp_path / "cache", memo)
    assert any("worker 7 hold" in text for text in asked)  # the test reaches the identifier
    asked.clear()
    edited = german[3].replace("step 3", "step three")
    de.write_text(de.read_text(encoding="utf-8").replace(german[3], edited), "utf-8")
    preview_pages(banks, None, tmp_path / "cache", memo)
    assert asked, "the edited question is judged again"
    # the edited item's texts (its verdict is its texts' together), no other item's
    assert all("worker 3 hold" in text or "q3" in text for text in asked), asked


def test_the_watch_survives_the_banks_folder_going_away(
    served: tuple[subprocess.Popen[str], str, Path], chromium: Any
) -> None:
    """`git stash -u`, a checkout, `rm -rf banks`: the banks' folder is gone for a while.
    The page says so and keeps its cards; once the folder is back, saves show again.
    (The watch had died on the first round without the folder, the server still up.)"""
    process, url, bank = served
    banks = bank.parent.parent
    text = bank.read_text(encoding="utf-8")
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url + "demo.en.html")
    page.wait_for_selector('.pv-card[data-item="one"] .ag-front')
    away = banks.with_name("banks.away")
    banks.rename(away)  # a stash: gone, then back as it was
    page.wait_for_selector(".pv-problems", timeout=15000)
    shown = page.inner_text(".pv-problems")
    assert re.search(r"banks: error: .*no such folder of banks", shown), shown
    assert page.is_visible('.pv-card[data-item="one"]')  # the last good cards stay
    away.rename(banks)
    page.wait_for_function("() => !document.querySelector('.pv-problems')", timeout=15000)
    bank.write_text(text.replace("Question one?", "Question one, stashed?"), "utf-8")
    page.wait_for_function(
        "() => document.body.innerText.includes('Question one, stashed?')", timeout=15000
    )
    shutil.rmtree(banks)  # removed outright, then made again with an edit
    page.wait_for_selector(".pv-problems", timeout=15000)
    assert "no such folder of banks" in page.inner_text(".pv-problems")
    write_bank(banks, items=[item("one", question="Question one, again?"), item("two", 2)])
    page.wait_for_function(
        """() => document.body.innerText.includes('Question one, again?')
        && !document.querySelector('.pv-problems')""",
        timeout=15000,
    )
    assert errors == []
    assert process.poll() is None
    process.send_signal(signal.SIGINT)
    assert process.wait(20) == 130
    stderr = process.stderr.read() if process.stderr else ""
    assert "no such folder of banks" in stderr
    assert "Traceback" not in stderr and "interrupted" in stderr


def fetch_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode("utf-8"))


def test_no_failure_in_a_round_ends_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever one round of the watch meets (here a bug in making the pages, then in
    looking at the files), it is told on the terminal and on the page, and the next
    change is shown."""
    import ankigen.serve

    bank = write_bank(tmp_path / "banks", items=[item("one"), item("two", 2)])
    text = bank.read_text(encoding="utf-8")
    making, looking = ankigen.serve.preview_pages, ankigen.serve.snapshot
    broken: set[str] = set()

    def make(*args: Any) -> Any:
        if "make" in broken:
            raise RuntimeError("a bug in making the pages")
        return making(*args)

    def look(*args: Any) -> Any:
        if "look" in broken:
            raise ValueError("a bug in looking at the files")
        return looking(*args)

    monkeypatch.setattr(ankigen.serve, "preview_pages", make)
    monkeypatch.setattr(ankigen.serve, "snapshot", look)
    heard: list[tuple[object, ...]] = []
    running = ankigen.serve.serve(tmp_path / "banks", None, 0, heard.append)
    page = next(running).url + "demo.en.html"
    try:
        broken.add("make")
        bank.write_text(text.replace("Question one?", "Question one, broken?"), "utf-8")
        until(
            lambda: "RuntimeError: a bug in making the pages" in fetch_text(page),
            "the page shows the failure",
        )
        assert any("a bug in making the pages" in str(p) for ps in heard for p in ps)
        broken.discard("make")
        bank.write_text(text.replace("Question one?", "Question one, mended?"), "utf-8")
        until(lambda: "Question one, mended?" in fetch_text(page), "the next save is shown")
        assert 'class="pv-problems"' not in fetch_text(page)
        broken.add("look")
        until(
            lambda: "ValueError: a bug in looking at the files" in fetch_text(page),
            "the page shows the watch's own failure",
        )
        broken.discard("look")  # the next round looks again: the problem goes
        until(lambda: 'class="pv-problems"' not in fetch_text(page), "the failure is cleared")
        # told once, not at each of the rounds that met it
        assert sum("looking at the files" in str(p) for ps in heard for p in ps) == 1
        bank.write_text(text.replace("Question one?", "Question one, seen?"), "utf-8")
        until(lambda: "Question one, seen?" in fetch_text(page), "the save after is shown")
    finally:
        running.close()


def ask(port: int, target: str, headers: list[tuple[str, str]], version: str = "1.1") -> Any:
    """A raw GET (no client adds or fixes a header): the status, the headers (lowercase
    names) and the body, or an event stream's first event."""
    request = [f"GET {target} HTTP/{version}", *(f"{k}: {v}" for k, v in headers)]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(("\r\n".join([*request, "Connection: close", "", ""])).encode())
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(65536)
            assert chunk, received
            received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        fields = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        if "content-length" in fields:
            wanted = int(fields["content-length"])
            ended = lambda: len(body) >= wanted  # noqa: E731
        elif fields.get("content-type") == "text/event-stream":
            ended = lambda: b"\n\n" in body  # noqa: E731
        else:
            ended = lambda: False  # noqa: E731
        while not ended():
            chunk = connection.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(status_line.split()[1]), fields, body.decode("utf-8", "replace")


def test_only_its_own_pages_may_read_it(
    served: tuple[subprocess.Popen[str], str, Path],
) -> None:
    """DNS rebinding (a page on evil.example, its name then pointed at 127.0.0.1) and
    cross-origin reads get nothing: only the server's own names are answered, only
    its own pages' requests, and no response allows another origin."""
    process, url, _ = served
    port = int(urllib.parse.urlsplit(url).port or 0)
    items = urllib.parse.quote(json.dumps(["one"]))
    routes = [
        "/",
        "/index.html",
        "/demo.en.html",
        "/__events?page=demo.en.html",
        "/__cards?page=demo.en.html",
        f"/__cards?page=demo.en.html&items={items}",
        "/_mathjax/tex-chtml-full.js",
    ]
    own, local = f"127.0.0.1:{port}", f"localhost:{port}"
    allowed: list[list[tuple[str, str]]] = [
        [("Host", own)],
        [("Host", local)],
        [("Host", own), ("Origin", f"http://{own}")],
        [("Host", local), ("Origin", f"http://{local}")],
        [("Host", own), ("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Mode", "cors")],
    ]
    refused: list[tuple[int, list[tuple[str, str]]]] = [
        (421, [("Host", f"evil.example:{port}")]),
        (421, [("Host", "evil.example")]),
        (421, [("Host", f"127.0.0.1:{port + 1}")]),
        (421, [("Host", "127.0.0.1")]),
        (421, [("Host", f"[::1]:{port}")]),  # it does not listen there
        (400, []),
        (400, [("Host", own), ("Host", f"evil.example:{port}")]),
        (403, [("Host", own), ("Origin", "http://evil.example")]),
        (403, [("Host", own), ("Origin", f"http://evil.example:{port}")]),
        (403, [("Host", own), ("Origin", "null")]),
        (403, [("Host", own), ("Origin", f"http://{local}")]),  # another origin
        (403, [("Host", own), ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "cors")]),
        (403, [("Host", own), ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "no-cors")]),
        (403, [("Host", own), ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Dest", "iframe")]),
    ]
    card_text = re.compile(r"Question|Explanation|choice \d|data-item|demo quiz")
    for route in routes:
        for headers in allowed:
            status, fields, body = ask(port, route, headers)
            assert status == 200, (route, headers, status, body[:300])
            assert not any(name.startswith("access-control-") for name in fields), fields
            assert fields.get("cross-origin-resource-policy") == "same-origin", fields
        if not route.startswith(("/__events", "/_mathjax")):  # the check can see card text
            assert card_text.search(ask(port, route, [("Host", own)])[2]), route
        for expected, headers in refused:
            status, fields, body = ask(port, route, headers)
            assert status == expected, (route, headers, status)
            assert not card_text.search(body), (route, headers, body)
            assert not any(name.startswith("access-control-") for name in fields), fields
        status, _, body = ask(port, route, [], version="1.0")  # HTTP/1.0 has no Host either
        assert status == 400 and not card_text.search(body), (route, status, body)
    # a link from another site opens the page: a navigation shows nothing to that site
    navigation = [("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "navigate")]
    navigation.append(("Sec-Fetch-Dest", "document"))
    assert ask(port, "/demo.en.html", [("Host", own), *navigation])[0] == 200
    assert process.poll() is None


def test_the_watch_sees_odd_entries_come_and_go(tmp_path: Path) -> None:
    """A link to nothing, a link to itself, a folder named like a bank: lint reports each,
    and the pages kept showing (or never showed) their errors, as only regular files
    were looked at."""
    from ankigen.serve import snapshot

    banks = tmp_path / "banks"
    write_bank(banks)
    before = snapshot([banks])
    for make, remove in [
        (lambda p: p.symlink_to(tmp_path / "nowhere.yaml"), Path.unlink),
        (lambda p: p.symlink_to(p), Path.unlink),
        (Path.mkdir, Path.rmdir),
    ]:
        odd = banks / "demo" / "de.yaml"
        make(odd)
        assert snapshot([banks]) != before, make
        remove(odd)
        assert set(snapshot([banks])) == set(before)
