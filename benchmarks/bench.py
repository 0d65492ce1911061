"""Benchmark: ankigen against the script a user would otherwise write.

    python benchmarks/bench.py [--scale small|large|both] [--repeat N]

It generates synthetic banks (10 languages x 1,000 items, and 10 x 10,000),
then, alternating between the contenders in one run, times:

- `ankigen build` from cold (no lock, no output);
- a plain genanki script: yaml.safe_load plus genanki.Package.write_to_file,
  one package per bank (the baseline);
- `ankigen build` again with nothing changed;
- `ankigen build` after one item in one bank was edited;
- floors: scripts that do only what any tool must (`FLOOR_NO_CHANGE`, `FLOOR_ONE_EDIT`).

Each run is a fresh process; it reports medians, ratios to the baseline
measured in the same run, package sizes and peak memory (RSS of the process
and its worker processes together, sampled every 20 ms).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

LANGUAGES = ["en", "de", "fr", "es", "pt", "it", "nl", "sv", "pl", "tr"]
WORDS = (
    "gradient shard parameter optimizer state memory all-reduce collective batch worker "
    "pipeline tensor stage offload checkpoint activation bandwidth latency throughput "
    "replica rank layer weight update communication overlap prefetch scatter gather"
).split()

BASELINE = """
import sys, yaml, genanki
from pathlib import Path
model = genanki.Model(1607392319, "Simple MC",
    fields=[{"name": "Question"}, {"name": "Choices"}, {"name": "Answer"}, {"name": "Explanation"}],
    templates=[{"name": "Card 1", "qfmt": "{{Question}}<br>{{Choices}}",
                "afmt": "{{FrontSide}}<hr id=answer>{{Answer}}<br>{{Explanation}}"}])
out = Path(sys.argv[2]); out.mkdir(parents=True, exist_ok=True)
for path in sorted(Path(sys.argv[1]).rglob("*.yaml")):
    bank = yaml.safe_load(path.read_text(encoding="utf-8"))
    deck = genanki.Deck(abs(hash(path.name)) % (1 << 30) + (1 << 30), bank["title"])
    for item in bank["items"]:
        choices = "".join(f"<li>{c}</li>" for c in item["choices"])
        answer = item["choices"][item["answer"] - 1]
        deck.add_note(genanki.Note(model=model, fields=[item["question"], f"<ol>{choices}</ol>",
                                                        answer, item["explanation"]]))
    genanki.Package(deck).write_to_file(out / f"{bank['topic']}.{bank['language']}.apkg")
"""


# What the machine allows, measured in the same run: scripts that do only what any tool
# must do for a build with nothing to do and for one edited item, with the libraries
# ankigen must use and nothing ankigen could leave out (no checks, no identity rules, no
# caches of its own, no fsync). Their time is a floor under ankigen's, not a rival.
FLOOR_NO_CHANGE = """
import fcntl, hashlib, json, os, sys
banks, packages, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
# the folder locked; every bank read and hashed (after a cold build none is known by its
# status yet), the lock file with them; the packages looked at; the statuses recorded
with open(os.path.join(out, "lock"), "a+b") as held:
    fcntl.flock(held.fileno(), fcntl.LOCK_EX)
    seen = []
    for folder, dirs, files in os.walk(banks):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            status = os.stat(path)
            with open(path, "rb") as bank:
                seen.append([path, status.st_mtime_ns, hashlib.sha256(bank.read()).hexdigest()])
    names = sorted(n for n in os.listdir(packages) if n.endswith(".apkg"))
    statuses = [os.stat(os.path.join(packages, n)).st_mtime_ns for n in names]
    with open(os.path.join(out, "record.tmp"), "wb") as record:
        record.write(json.dumps([seen, names, statuses]).encode())
    os.replace(os.path.join(out, "record.tmp"), os.path.join(out, "record"))
for name in names:
    print(f"up to date {packages}/{name}")
os._exit(0)
"""

FLOOR_ONE_EDIT = """
import functools, hashlib, json, os, re, sqlite3, sys, types
# genanki as ankigen imports it (without asyncio); libyaml; libdeflate
stand_in = types.ModuleType("cached_property")
stand_in.cached_property = functools.cached_property
sys.modules["cached_property"] = stand_in
import deflate, genanki, yaml
bank_path, lock_path, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
data = open(bank_path, "rb").read()
hashlib.sha256(data).hexdigest()
text = data.decode()
# the edited item alone parsed: the others are known from the last build
starts = [found.start() + 1 for found in re.finditer("\\n  - id: ", text)]
yaml.load(text[starts[0] : starts[1]], Loader=yaml.CSafeLoader)
# the deck's package written whole (a package is one database, deflated), with a note
# and a card per item holding as much text as the item
db = os.path.join(out, "collection.anki2")
if os.path.exists(db):
    os.unlink(db)
connection = sqlite3.connect(db)
connection.execute("PRAGMA journal_mode = OFF")
connection.execute("PRAGMA page_size = 65536")
connection.execute("CREATE TABLE notes (id integer primary key, guid text, mid integer, "
                   "mod integer, usn integer, tags text, flds text, sfld integer, csum integer, "
                   "flags integer, data text)")
connection.execute("CREATE TABLE cards (id integer primary key, nid integer, did integer, "
                   "ord integer, mod integer, usn integer, type integer, queue integer, "
                   "due integer, ivl integer, factor integer, reps integer, lapses integer, "
                   "left integer, odue integer, odid integer, flags integer, data text)")
ends = [*starts[1:], len(text)]
connection.executemany("INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       ((n, f"g{n}", 1, 1, -1, " t ", text[a:b], "", 0, 0, "")
                        for n, (a, b) in enumerate(zip(starts, ends))))
connection.executemany("INSERT INTO cards VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       ((n, n, 1, 0, 1, -1, 0, 0, n, 0, 0, 0, 0, 0, 0, 0, 0, "")
                        for n in range(len(starts))))
connection.commit()
connection.close()
with open(os.path.join(out, "deck.apkg"), "wb") as package:
    package.write(deflate.deflate_compress(open(db, "rb").read(), 7))
# the lock read and written again: the edited item's time is in it
lock = json.loads(open(lock_path, "rb").read())
with open(os.path.join(out, "lock"), "wb") as written:
    written.write(json.dumps(lock, indent=1, ensure_ascii=False).encode())
print(f"wrote {out}/deck.apkg")
os._exit(0)
"""

SETTLED_AFTER = 3.5
"""Seconds after the banks' copy when their statuses are settled (`bank.folder.SETTLE_NS`)."""


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize()


# English grammar words: text still in the reference language, as a translation holds
# it while half done (started with `translate`, then touched)
GRAMMAR = "the of to in is are that which for with from on by this and".split()


def english(rng: random.Random, words: int) -> str:
    """Reference-language prose that is not the reference's text."""
    return " ".join(
        rng.choice(GRAMMAR) if n % 2 else rng.choice(WORDS) for n in range(words)
    ).capitalize()


# an English sentence as a reference holds it: terms, with a grammar word now and then
# (a quarter of the words, fewer than `english`'s half: the function words alone do not
# decide it), and a number
def reference_prose(rng: random.Random, words: int) -> str:
    said = [rng.choice(GRAMMAR) if n % 4 == 1 else rng.choice(WORDS) for n in range(words)]
    said.insert(words // 2, str(rng.choice((2, 4, 8, 16, 32, 64))))
    return " ".join(said).capitalize()


CLAUSES = ("which is the default", "as in the last release", "when the batch is large")


def reworded(rng: random.Random, text: str) -> str:
    """The reference's text as a translation holds it after the reference was edited:
    two words swapped, its number changed, a clause added."""
    said = text.rstrip("?.").split()
    i, j = rng.sample(range(len(said)), 2)
    said[i], said[j] = said[j], said[i]
    said = [str(int(w) * 2) if w.isdigit() else w for w in said]
    return " ".join([*said, rng.choice(CLAUSES)]).capitalize()


KINDS = ("plain", "partial", "reworded")
KINDS_HELP = """plain: every translation translated; partial: half of each translation's questions
and explanations English prose unlike the reference's; reworded: the reference is
English prose, and half of each translation's questions and explanations are its text
reworded (the reference edited after translating)"""


def write_banks(folder: Path, items: int, seed: int = 1, kind: str = "plain") -> None:
    """The banks of one kind (`KINDS`)."""
    rng = random.Random(seed)
    reference: list[tuple[str, str]] = []
    for language in LANGUAGES:
        lines = [
            "topic: synthetic",
            f"language: {language}",
            f'title: "Synthetic {language}"',
            "tags: [benchmark]",
            "items:",
        ]
        for n in range(items):
            untouched = kind != "plain" and language != "en" and n % 2 == 0
            if kind == "reworded" and language == "en":
                reference.append((reference_prose(rng, 12), reference_prose(rng, 30)))
            # drawn in this order (question, choices, explanation): the plain banks are
            # the reproducibility test's too (tests/reproducible.py)
            if kind == "reworded" and (untouched or language == "en"):
                question, explanation = reference[n]
                if untouched:
                    question, explanation = (reworded(rng, text) for text in reference[n])
                choices = [f"{sentence(rng, 6)} {k}" for k in range(4)]
            else:
                prose = english if untouched else sentence
                question = prose(rng, 12)
                choices = [f"{sentence(rng, 6)} {k}" for k in range(4)]
                explanation = prose(rng, 30)
            lines += [
                f"  - id: item-{n}",
                f'    question: "{question}?"',
                "    choices:",
                *(f'      - "{choice}"' for choice in choices),
                f"    answer: {n * 7 % 4 + 1}",  # the same in every language, as translations are
                f'    explanation: "{explanation}."',
            ]
        path = folder / "synthetic" / f"{language}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def tree_rss_kib(root: int) -> int:
    """Resident memory of a process and all its descendants (Linux /proc), in KiB.

    Only the tree's own files are read (each thread's list of children): reading every
    process's status took 6 ms a sample here, a third of a core at one sample every
    20 ms, taken from the two cores a build's processes share (a one-process script
    left the other core to it)."""
    if not Path(f"/proc/{root}/task/{root}/children").exists():
        return _all_processes_rss_kib(root)  # a kernel without the children lists
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                    break
            for children in Path(f"/proc/{pid}/task").glob("*/children"):
                stack.extend(int(child) for child in children.read_text().split())
        except (OSError, ValueError):
            continue  # the process has just ended
    return total


def _all_processes_rss_kib(root: int) -> int:
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = entry.joinpath("status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        pid = int(entry.name)
        children.setdefault(int(fields.get("PPid", "0").strip()), []).append(pid)
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0])
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


CHILD_ENV = dict(os.environ)


def use_bytecode() -> None:
    """Run every contender as installed: with its modules compiled once (pip does that at
    install), even where PYTHONDONTWRITEBYTECODE would make each run compile them again."""
    CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    folder = subprocess.run(
        [sys.executable, "-c", "import ankigen, os; print(os.path.dirname(ankigen.__file__))"],
        env=CHILD_ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    subprocess.run([sys.executable, "-m", "compileall", "-q", folder], env=CHILD_ENV, check=True)


def run(command: list[str], cwd: Path) -> tuple[float, int, float]:
    """Wall time, peak RSS (KiB) and CPU time (user + system, s) of one process with its
    worker processes, summed. CPU time hardly depends on how busy the machine is.

    The memory is sampled by a thread while this one waits for the process: the end
    is seen at once (a loop that polled between samples every 20 ms added up to one
    period to each time, a sixth of a build with nothing to do)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.02):
            peak = max(peak, tree_rss_kib(process.pid))

    sampler = threading.Thread(target=sample)
    if Path("/proc").is_dir():
        sampler.start()
    # wait4 reports the child's CPU time with that of the workers it waited for
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    done.set()
    if sampler.is_alive():
        sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        detail = process.stderr.read().decode() if process.stderr else ""
        raise SystemExit(f"{' '.join(command)} failed: {detail}")
    if process.stderr:
        process.stderr.close()
    return elapsed, peak, usage.ru_utime + usage.ru_stime


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("*.apkg"))


def caches_size(out: Path) -> int:
    """OUT's caches: every file ankigen keeps there besides the packages."""
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and p.suffix != ".apkg")


def banks_size(banks: Path) -> int:
    return sum(p.stat().st_size for p in banks.rglob("*.yaml"))


def bench(items: int, repeat: int, work: Path, kind: str = "plain") -> dict[str, object]:
    banks = work / f"banks-{items}-{kind}"
    if banks.exists():
        shutil.rmtree(banks)
    write_banks(banks, items, kind=kind)
    ankigen = [sys.executable, "-m", "ankigen"]
    times: dict[str, list[float]] = {
        name: []
        for name in (
            "baseline",
            "cold",
            "lint",
            "noop",
            "noop_known",
            "floor_noop",
            "edit",
            "floor_edit",
        )
    }
    cpu: dict[str, list[float]] = {name: [] for name in times}
    rss: dict[str, int] = {}
    sizes: dict[str, int] = {}
    edited = banks / "synthetic" / "de.yaml"
    original = edited.read_text(encoding="utf-8")
    for round_ in range(repeat):
        project = work / f"project-{items}"
        if project.exists():
            shutil.rmtree(project)
        shutil.copytree(banks, project / "banks")
        copied = time.monotonic()
        base_out = work / f"baseline-{items}"
        shutil.rmtree(base_out, ignore_errors=True)
        script = work / "baseline.py"
        script.write_text(BASELINE, encoding="utf-8")
        floors = {name: work / f"{name}.py" for name in ("floor_noop", "floor_edit")}
        floors["floor_noop"].write_text(FLOOR_NO_CHANGE, encoding="utf-8")
        floors["floor_edit"].write_text(FLOOR_ONE_EDIT, encoding="utf-8")
        floor_out = work / f"floor-{items}"
        # alternate the order of the two cold contenders between rounds
        order = ["baseline", "cold"] if round_ % 2 == 0 else ["cold", "baseline"]
        for name in order:
            if name == "baseline":
                elapsed, peak, used = run(
                    [sys.executable, str(script), str(banks), str(base_out)], work
                )
                sizes["baseline"] = size_of(base_out)
            else:
                elapsed, peak, used = run([*ankigen, "build"], project)
                sizes["ankigen"] = size_of(project / "out")
                sizes["caches"] = max(sizes.get("caches", 0), caches_size(project / "out"))
            times[name].append(elapsed)
            cpu[name].append(used)
            rss[name] = max(rss.get(name, 0), peak)
        elapsed, peak, used = run([*ankigen, "lint"], project)
        times["lint"].append(elapsed)
        cpu["lint"].append(used)
        rss["lint"] = max(rss.get("lint", 0), peak)
        # as an author's banks are, saved more than a moment before: a bank whose status is
        # younger than ankigen's 3 s is read (and was, every other round, when the cold
        # build ran first, a second after the copy)
        time.sleep(max(0.0, copied + SETTLED_AFTER - time.monotonic()))
        # the first build with nothing to do reads the banks the cold build could not know
        # by their statuses (they had not settled); the next knows every one
        for name, command in (
            ("noop", [*ankigen, "build"]),
            ("noop_known", [*ankigen, "build"]),
            ("floor_noop", [sys.executable, str(floors["floor_noop"]), "banks", "out", floor_out]),
        ):
            elapsed, peak, used = run([str(part) for part in command], project)
            times[name].append(elapsed)
            cpu[name].append(used)
            rss[name] = max(rss.get(name, 0), peak)
        target = project / "banks" / "synthetic" / "de.yaml"
        target.write_text(
            original.replace("answer:", "answer:", 1).replace('?"', f' (edit {round_})?"', 1),
            encoding="utf-8",
        )
        floor_edit = [sys.executable, str(floors["floor_edit"]), str(target)]
        for name, command in (
            ("edit", [*ankigen, "build"]),
            ("floor_edit", [*floor_edit, str(project / "banks" / "ankigen.lock"), str(floor_out)]),
        ):
            elapsed, peak, used = run(command, project)
            times[name].append(elapsed)
            cpu[name].append(used)
            rss[name] = max(rss.get(name, 0), peak)
        sizes["caches"] = max(sizes["caches"], caches_size(project / "out"))
    sizes["banks"] = banks_size(banks)
    medians = {name: statistics.median(values) for name, values in times.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    return {
        "items": items,
        "kind": kind,
        "medians": medians,
        "cpu": cpu_medians,
        "rss": rss,
        "sizes": sizes,
    }


def startup(work: Path, repeat: int) -> float:
    return statistics.median(
        run([sys.executable, "-m", "ankigen", "--help"], work)[0] for _ in range(max(repeat, 5))
    )


LABELS = {"plain": "", "partial": ", half untranslated", "reworded": ", half reworded"}


def report(results: list[dict[str, object]], help_time: float) -> str:
    lines = [
        "| banks | contender | median s | × baseline | × cold | CPU s | CPU × baseline "
        "| CPU × cold | peak RSS MiB | packages MiB |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for result in results:
        medians: dict[str, float] = result["medians"]  # type: ignore[assignment]
        cpu: dict[str, float] = result["cpu"]  # type: ignore[assignment]
        rss: dict[str, int] = result["rss"]  # type: ignore[assignment]
        sizes: dict[str, int] = result["sizes"]  # type: ignore[assignment]
        label = f"10 × {result['items']:,}" + LABELS[str(result["kind"])]
        base = medians["baseline"]
        cold = medians["cold"]
        for name, title in (
            ("baseline", "genanki script"),
            ("cold", "ankigen cold"),
            ("lint", "ankigen lint"),
            ("noop", "ankigen no change"),
            ("noop_known", "ankigen no change, banks known"),
            ("floor_noop", "floor: no change"),
            ("edit", "ankigen one edit"),
            ("floor_edit", "floor: one edit"),
        ):
            size = sizes["baseline"] if name == "baseline" else sizes["ankigen"]
            shown = "" if name.startswith("floor") or name == "lint" else f"{size / 2**20:.1f}"
            lines.append(
                f"| {label} | {title} | {medians[name]:.3f} | {medians[name] / base:.3f} | "
                f"{medians[name] / cold:.3f} | {cpu[name]:.2f} | "
                f"{cpu[name] / cpu['baseline']:.3f} | {cpu[name] / cpu['cold']:.3f} | "
                f"{rss[name] / 1024:.0f} | "
                f"{shown} |"
            )
        lines.append(
            f"| {label} | size ratio ankigen / genanki | | "
            f"{sizes['ankigen'] / sizes['baseline']:.4f} | | | | | | |"
        )
        lines.append(
            f"| {label} | OUT's caches / banks ({sizes['caches'] / 2**20:.1f} MiB / "
            f"{sizes['banks'] / 2**20:.1f} MiB) | | {sizes['caches'] / sizes['banks']:.4f} "
            "| | | | | | |"
        )
    lines.append(f"\n`ankigen --help` starts in {help_time:.3f} s (median).")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", choices=["small", "large", "both"], default="small")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, help="keep the generated files here")
    parser.add_argument(
        "--banks",
        choices=[*KINDS, "all"],
        default="all",
        help="which banks (default all three kinds): " + " ".join(KINDS_HELP.split()),
    )
    args = parser.parse_args()
    scales = {"small": [1000], "large": [10_000], "both": [1000, 10_000]}[args.scale]
    work = args.work or Path(tempfile.mkdtemp(prefix="ankigen-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    use_bytecode()
    kinds = list(KINDS) if args.banks == "all" else [args.banks]
    results = [bench(items, args.repeat, work, kind) for items in scales for kind in kinds]
    print(report(results, startup(work, args.repeat)))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
