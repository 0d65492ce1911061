"""From save to an updated page: `ankigen serve` on generated banks, in a real browser.

    python benchmarks/serve.py                # 10 languages x 1,000 items, 7 edits
    python benchmarks/serve.py --items 10000 --edits 3

The banks are `bench.py`'s. A headless Chromium (Playwright) opens the edited deck's
page; each round rewrites one question of that bank on disk and times, from the file's
write to the page showing the new text, with the page's own clock and the script's
synchronized on the new text appearing, never on a sleep. Edits alternate between a
translation (fr) and the reference (en), whose edit has every translation checked
against it again. Measured in the same run:

- baseline: a reload of the page by hand (`page.reload`), what an author did before;
- floor: what any watching preview must spend, half the watch's poll interval on
  average plus one request the server answers from memory (`/__cards`).

The goal (issue 37) is at most 0.5 s at 10 x 1,000 items.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench import write_banks

GOAL_SECONDS = 0.5


def start(banks: Path) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "ankigen", "serve", str(banks), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    found = re.search(r"http://\S+", line)
    if not found:
        server.kill()
        raise SystemExit(f"serve did not start: {line!r}")
    return server, found.group(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=7)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="ankigen-serve-bench-") as work:
        banks = Path(work) / "banks"
        write_banks(banks, args.items, partial=True)
        edits = [banks / "synthetic" / f"{language}.yaml" for language in ("fr", "en")]
        server, url = start(banks)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                    args=["--no-sandbox"],
                )
                page = browser.new_page()
                reloads, saves, asks = [], [], []
                texts = [edited.read_text(encoding="utf-8") for edited in edits]
                for round_ in range(args.edits):
                    edited, text = edits[round_ % 2], texts[round_ % 2]
                    started = time.perf_counter()
                    page.goto(url + f"synthetic.{edited.stem}.html", wait_until="load")
                    page.wait_for_selector(".pv-card .ag-card")
                    reloads.append(time.perf_counter() - started)
                    asks.append(
                        page.evaluate(
                            """page => { var t = performance.now();
                            return fetch('/__cards?page=' + page).then(r => r.json())
                            .then(() => (performance.now() - t) / 1000); }""",
                            f"synthetic.{edited.stem}.html",
                        )
                    )
                    marker = f"edited-{round_}-{os.getpid()}"
                    changed = re.sub(r'question: "', f'question: "{marker} ', text, count=1)
                    started = time.perf_counter()
                    edited.write_text(changed, encoding="utf-8")
                    page.wait_for_function(
                        "marker => document.querySelector("
                        "'.pv-card[data-item=\"item-0\"] .pv-qa').textContent.includes(marker)",
                        arg=marker,
                        timeout=60_000,
                        polling="raf",
                    )
                    saves.append(time.perf_counter() - started)
                    texts[round_ % 2] = changed
                browser.close()
        finally:
            os.killpg(server.pid, signal.SIGINT)
            server.wait(30)
    from ankigen.serve import POLL_SECONDS

    baseline = statistics.median(reloads)
    floor = POLL_SECONDS / 2 + statistics.median(asks)
    save = statistics.median(saves)
    print(f"10 x {args.items:,} items, {args.edits} edits, half-translated banks")
    print("| measure | median s | max s | × baseline | × floor |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| baseline: page reload | {baseline:.3f} | {max(reloads):.3f} | 1.00 | |")
    print(f"| floor: poll/2 + one request | {floor:.3f} | | | 1.00 |")
    print(
        f"| save → updated page | {save:.3f} | {max(saves):.3f} | "
        f"{save / baseline:.2f} | {save / floor:.2f} |"
    )
    print(f"goal: ≤ {GOAL_SECONDS} s — {'met' if save <= GOAL_SECONDS else 'NOT met'}")


if __name__ == "__main__":
    main()
