"""Build integrity: what was read is what ships, whatever happens around the build."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from PIL import Image

from tests.helpers import (
    AnkiCollection,
    invoke,
    item,
    read_build_cache,
    rewrite_entry,
    run_probe,
    write_bank,
    write_build_cache,
)


def package_text(path: Path) -> bytes:
    with zipfile.ZipFile(path) as archive:
        return archive.read("collection.anki2")


def rebuilt_after(project: Path, runner: CliRunner, change: Any) -> Result:
    """A two-item bank built, its one cache entry changed by `change(entry)` and its
    package removed, then built again: the new package must be the first one's."""
    write_bank(project / "banks", items=[item("one"), item("two")])
    assert invoke(runner, "build").exit_code == 0
    good = (project / "out" / "demo.en.apkg").read_bytes()
    [entry] = list((project / "out" / ".ankigen-banks").glob("*.json"))
    change(entry)
    (project / "out" / "demo.en.apkg").unlink()
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    assert (project / "out" / "demo.en.apkg").read_bytes() == good
    return result


def test_a_bank_saved_during_a_build_is_picked_up_by_the_next(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ankigen.bank.files

    path = write_bank(project / "banks", items=[item("one", question="First?")])
    assert invoke(runner, "build").exit_code == 0
    write_bank(project / "banks", items=[item("one", question="Second?")])
    real = ankigen.bank.files.read_bank_file
    edited = item("one", question="Saved during the build?")

    def read_then_edit(p: Path) -> bytes:
        data = real(p)
        write_bank(project / "banks", items=[edited])  # an editor's autosave, right after
        return data

    monkeypatch.setattr(ankigen.bank.files, "read_bank_file", read_then_edit)
    assert invoke(runner, "build").exit_code == 0
    assert b"Second?" in package_text(project / "out" / "demo.en.apkg")
    monkeypatch.setattr(ankigen.bank.files, "read_bank_file", real)
    result = invoke(runner, "build")
    assert "wrote out/demo.en.apkg" in result.stdout
    assert b"Saved during the build?" in package_text(project / "out" / "demo.en.apkg")
    assert path.exists()


def test_a_cache_entry_for_other_bytes_is_never_used(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[item("one", question="Original?")])
    assert invoke(runner, "build").exit_code == 0
    cache = project / "out" / ".ankigen-banks"
    [entry] = list(cache.glob("*.json"))

    def poison(header: dict[str, str], data: dict[str, dict[str, dict[str, list[str]]]]) -> None:
        data["bank"]["items"]["question"][0] = "Text that is in no bank?"  # items by field

    rewrite_entry(entry, poison, checksum=False)
    (project / "out" / "demo.en.apkg").unlink()
    assert invoke(runner, "build").exit_code == 0
    assert b"Original?" in package_text(project / "out" / "demo.en.apkg")

    # an entry for other bytes is ignored too, however consistent it is in itself
    [entry] = list(cache.glob("*.json"))

    def other_bytes(header: dict[str, str], data: object) -> None:
        poison(header, data)  # type: ignore[arg-type]
        header["digest"] = "0" * 64

    rewrite_entry(entry, other_bytes)
    (project / "out" / "demo.en.apkg").unlink()
    assert invoke(runner, "build").exit_code == 0
    assert b"Text that is in no bank" not in package_text(project / "out" / "demo.en.apkg")


@pytest.mark.parametrize(
    "shape",
    [
        lambda h, d: d["bank"]["items"]["choices"].__setitem__(0, "abc"),
        lambda h, d: d["bank"]["items"]["choices"].__setitem__(0, ["a", "b"]),  # as JSON has it
        lambda h, d: d["bank"]["items"]["question"].__setitem__(0, compile("0", "", "eval")),
        lambda h, d: d["bank"]["items"]["answer"].__setitem__(0, ("1",)),
        lambda h, d: d["bank"]["items"]["answer"].__setitem__(0, (True,)),
        lambda h, d: d["bank"]["items"]["line_offsets"].__setitem__(0, ("1",)),
        lambda h, d: d["bank"]["items"]["line_keys"].__setitem__(0, (1,)),
        lambda h, d: d["bank"]["items"]["line_offsets"].__setitem__(  # a key without its line
            0, d["bank"]["items"]["line_offsets"][0][:-1]
        ),
        lambda h, d: d["bank"]["items"]["id"].pop(),  # fields of different lengths
        lambda h, d: d["bank"].__setitem__("items", {"x": 1}),
        lambda h, d: d["bank"].__setitem__("items", []),
        lambda h, d: d.__setitem__("bank", []),
        lambda h, d: d["bank"]["items"].pop("question"),
        lambda h, d: d.__setitem__("diagnostics", [[1, 2, 3, 4]]),
        lambda h, d: h.__setitem__("version", "0.0.1"),
        lambda h, d: d["bank"].pop("outline"),
        lambda h, d: d["bank"]["outline"]["id"].pop(),
        lambda h, d: d["bank"]["outline"]["retired"].__setitem__(0, 1),
        lambda h, d: d["bank"]["outline"]["images"].__setitem__(0, (("audio", "a.png", 3),)),
        lambda h, d: d["bank"]["outline"]["images"].__setitem__(0, (("image", "a.png", "3"),)),
    ],
)
def test_bank_cache_entries_of_the_wrong_shape_are_ignored(
    project: Path, runner: CliRunner, shape: object
) -> None:
    rebuilt_after(project, runner, lambda entry: rewrite_entry(entry, shape))
    lock = json.loads((project / "banks" / "ankigen.lock").read_text(encoding="utf-8"))
    assert sorted(lock["decks"]["demo.en"]["items"]) == ["one", "two"]


def test_a_cache_entry_whose_outline_is_not_its_items(project: Path, runner: CliRunner) -> None:
    """A build plans decks from the outlines of the banks it did not read again. Items
    that are not what their outline says are read again from the bank; an outline that
    is not what the bank says (no ankigen wrote it) stops the build before anything is
    written, its entry removed, so that the next build reads the bank afresh."""
    write_bank(project / "banks", items=[item("one"), item("two")])
    assert invoke(runner, "build").exit_code == 0
    good = (project / "out" / "demo.en.apkg").read_bytes()
    [entry] = list((project / "out" / ".ankigen-banks").glob("*.json"))
    package = project / "out" / "demo.en.apkg"
    rewrite_entry(entry, lambda h, d: d["bank"]["items"]["id"].__setitem__(1, "three"))
    package.unlink()
    assert invoke(runner, "build").exit_code == 0
    assert package.read_bytes() == good

    [entry] = list((project / "out" / ".ankigen-banks").glob("*.json"))
    rewrite_entry(entry, lambda h, d: d["bank"]["outline"]["id"].__setitem__(1, "three"))
    package.unlink()
    result = invoke(runner, "build")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"error: out/.ankigen-banks/{entry.name}: the bank cache entry of banks/demo/en.yaml "
        "is damaged; it is removed now: build again\n"
    )
    assert not entry.exists() and not package.exists()
    assert invoke(runner, "build").exit_code == 0
    assert package.read_bytes() == good


@pytest.mark.parametrize("cache", ["bank cache", "build cache"])
def test_caches_that_cannot_be_written_are_left_out(
    project: Path, runner: CliRunner, cache: str
) -> None:
    """The caches are written after the packages and the lock: a file where the bank
    cache's folder should be, or a folder where the build cache's file should be, does not
    fail a build that is done; each build then does the work again."""
    write_bank(project / "banks", items=[item("one"), item("two")])
    (project / "out").mkdir()
    if cache == "bank cache":
        (project / "out" / ".ankigen-banks").write_bytes(b"not a folder")
    else:
        (project / "out" / ".ankigen-cache.json").mkdir()
    for question in ("First?", "Second?", "Second?"):
        write_bank(project / "banks", items=[item("one", question=question), item("two")])
        result = invoke(runner, "build")
        assert (result.exit_code, result.stderr) == (0, ""), result.output
        assert question.encode() in package_text(project / "out" / "demo.en.apkg")
    # the same banks again: up to date, or without a build cache written again unchanged
    expected = (
        "up to date" if cache == "bank cache" else "wrote out/demo.en.apkg: 2 notes (0 new, 0"
    )
    assert result.stdout.startswith(expected)


def test_odd_files_among_the_bank_cache_entries_are_passed_over(
    project: Path, runner: CliRunner
) -> None:
    """An edit looks for the bank's previous entry among the files in the cache: a
    FIFO there is not opened (it would block), junk is not read as an entry."""
    write_bank(project / "banks", items=[item("one"), item("two")])
    assert invoke(runner, "build").exit_code == 0
    cache = project / "out" / ".ankigen-banks"
    os.mkfifo(cache / "fifo.json")
    (cache / "junk.json").write_bytes(b"\xff{not json\n")
    (cache / "folder.json").mkdir()
    write_bank(project / "banks", items=[item("one", question="Edited?"), item("two")])
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    assert b"Edited?" in package_text(project / "out" / "demo.en.apkg")


@pytest.mark.parametrize("odd", ["fifo", "folder", "junk", "wrong shape", "nested"])
def test_an_odd_record_of_translations_checked_is_passed_over(
    project: Path, runner: CliRunner, odd: str
) -> None:
    """The record of translations checked against their reference is only a cache:
    whatever stands in its place, the build checks them again and says what `lint` says."""
    from ankigen import __version__
    from ankigen.checks.bankcache import ACROSS_NAME
    from ankigen.checks.cache_entry import FORMAT

    banks = project / "banks"
    write_bank(banks, language="en", items=[item("a"), item("b", 2)])
    write_bank(banks, language="de", items=[item("a", 3), item("b", 2)])
    write_bank(banks, "other")
    assert invoke(runner, "build").exit_code == 0
    record = project / "out" / ".ankigen-banks" / ACROSS_NAME
    kept = json.loads(record.read_text(encoding="utf-8"))["pairs"]
    assert len(kept) == 1
    record.unlink()
    if odd == "fifo":
        os.mkfifo(record)
    elif odd == "folder":
        record.mkdir()
    elif odd == "junk":
        record.write_bytes(b"\xff{not json")
    else:
        # under the key of the translation checked: only its shape can tell
        wrong = {key: [["banks/demo/de.yaml", "one", "warning", "m"]] for key in kept}
        pairs = wrong if odd == "wrong shape" else "[" * 10**5
        record.write_text(json.dumps({"version": [__version__, FORMAT], "pairs": pairs}))
    # another topic edited: the translation is checked against the same reference
    write_bank(banks, "other", items=[item("one", question="Edited?")])
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    lint = invoke(runner, "lint").output
    assert "answer 3 differs from 1 in 'en'" in lint
    assert lint.endswith("0 errors, 3 warnings in 3 banks\n")
    assert "3 warnings in the banks" in result.stderr


@pytest.mark.parametrize(
    "content",
    [
        {"version": "0.1.0", "packages": [], "last": "x"},
        {"version": "0.1.0", "packages": {"demo.en.apkg": 5}, "last": {"inputs": 1, "decks": 7}},
        [1, 2, 3],
        {"version": "0.1.0", "last": {"decks": [{"path": "../../x.apkg"}]}},
    ],
)
def test_build_caches_of_the_wrong_shape_are_ignored(
    project: Path, runner: CliRunner, content: object
) -> None:
    write_bank(project / "banks")
    assert invoke(runner, "build").exit_code == 0
    # signed with this user's key: only its shape can stop it
    write_build_cache(project / "out" / ".ankigen-cache.json", content)
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(("wrote out/demo.en.apkg", "up to date out/demo.en.apkg"))


@pytest.mark.parametrize(
    "name", [".ankigen-cache.json", ".ankigen-issued.json", ".ankigen-banks/*"]
)
def test_json_nested_without_end_in_the_output_folder_is_ignored(
    project: Path, runner: CliRunner, name: str
) -> None:
    write_bank(project / "banks")
    assert invoke(runner, "build").exit_code == 0
    good = (project / "out" / "demo.en.apkg").read_bytes()
    found = list((project / "out").glob(name))
    assert found
    for path in found:
        path.write_text("[" * 100_000 + "]" * 100_000)  # past Python's JSON recursion limit
    (project / "out" / "demo.en.apkg").unlink()
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    assert (project / "out" / "demo.en.apkg").read_bytes() == good


def test_a_same_size_image_copied_with_its_time_is_not_stale(
    project: Path, runner: CliRunner
) -> None:
    media = project / "media"
    media.mkdir()
    Image.new("RGB", (40, 40), (255, 0, 0)).save(media / "a.bmp")
    Image.new("RGB", (40, 40), (0, 0, 255)).save(project / "b.bmp")
    assert (media / "a.bmp").stat().st_size == (project / "b.bmp").stat().st_size
    write_bank(project / "banks", items=[item("one", image="a.bmp", image_alt="a square")])
    assert invoke(runner, "build").exit_code == 0
    before = (project / "out" / "demo.en.apkg").read_bytes()
    stat = (media / "a.bmp").stat()
    subprocess.run(["cp", "-p", str(project / "b.bmp"), str(media / "a.bmp")], check=True)
    os.utime(media / "a.bmp", ns=(stat.st_atime_ns, stat.st_mtime_ns))  # as an archive would
    result = invoke(runner, "build")
    assert "wrote out/demo.en.apkg" in result.stdout
    assert (project / "out" / "demo.en.apkg").read_bytes() != before


def test_junk_in_the_media_folder_never_fails_a_build(project: Path, runner: CliRunner) -> None:
    media = project / "media"
    media.mkdir()
    Image.new("RGB", (20, 20), (0, 128, 0)).save(media / "used.png")
    (media / ".#diagram.svg").symlink_to("user@host.1234")  # an editor's lock file
    (media / "loop").symlink_to(media / "loop")
    (media / "dangling.png").symlink_to(media / "nowhere.png")
    (media / os.fsdecode(b"caf\xe9.png")).write_bytes(b"not utf-8 name")
    write_bank(project / "banks", items=[item("one", image="used.png", image_alt="green")])
    first = invoke(runner, "build")
    assert first.exit_code == 0, first.output
    assert invoke(runner, "build").stdout.startswith("up to date")


def test_a_bank_file_name_that_is_not_utf8_is_a_clear_error(project: Path) -> None:
    write_bank(project / "banks")
    bad = os.fsencode(project / "banks" / "demo") + b"/caf\xe9.yaml"
    with open(bad, "wb") as handle:
        handle.write(b"topic: x\n")
    done = subprocess.run(
        [sys.executable, "-m", "ankigen", "build"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        "banks/demo/caf\\xe9.yaml: error: the file name is not valid UTF-8"
    )
    assert "internal error" not in done.stderr


def test_a_failed_write_changes_nothing(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ankigen.core.atomic

    write_bank(project / "banks", "one")
    write_bank(project / "banks", "two")
    assert invoke(runner, "build").exit_code == 0
    before = {p.name: p.read_bytes() for p in (project / "out").glob("*.apkg")}
    lock = (project / "banks" / "ankigen.lock").read_bytes()
    write_bank(project / "banks", "one", items=[item("one", question="New?"), item("two")])
    write_bank(project / "banks", "two", items=[item("one", question="New?"), item("two")])

    real = ankigen.core.atomic._stage

    def disk_full_at_the_lock(path: Path, data: bytes, *mode: int) -> str:
        if path.name == "ankigen.lock":
            raise OSError(28, "No space left on device")
        return real(path, data, *mode)

    monkeypatch.setattr(ankigen.core.atomic, "_stage", disk_full_at_the_lock)
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert "No space left on device" in result.output
    assert {p.name: p.read_bytes() for p in (project / "out").glob("*.apkg")} == before
    assert (project / "banks" / "ankigen.lock").read_bytes() == lock
    leftovers = list(project.rglob(".ankigen-tmp-*"))
    assert leftovers == []


def test_a_rename_that_fails_part_way_puts_back_what_it_replaced(
    project: Path, runner: CliRunner
) -> None:
    """The commit's renames: where one fails (a package's name now a folder; a lock made
    immutable does the same), the files already renamed (the record of issued times, a
    package) had been replaced, yet the build said "nothing was changed". They are put
    back from hard links kept beside them until the commit is done."""
    write_bank(project / "banks", "one")
    write_bank(project / "banks", "two")
    assert invoke(runner, "build").exit_code == 0
    out = project / "out"

    def files() -> dict[str, bytes]:
        found = [*out.iterdir(), project / "banks" / "ankigen.lock"]
        return {p.name: p.read_bytes() for p in found if p.is_file()}

    write_bank(project / "banks", "one", items=[item("one", question="New?"), item("two")])
    write_bank(project / "banks", "two", items=[item("one", question="New?"), item("two")])
    (out / "two.en.apkg").unlink()
    (out / "two.en.apkg").mkdir()
    before = files()
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert "two.en.apkg: cannot write: Is a directory; nothing was changed" in result.output
    assert files() == before
    assert list(project.rglob(".ankigen-tmp-*")) == []


def test_the_evidence_goes_in_first_and_the_lock_last(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issued record and the lock are written while packages are still being made,
    and renamed into place around them: a stop between two renames only makes the next
    build's times newer, never older."""
    import ankigen.core.atomic

    write_bank(project / "banks", "one")
    assert invoke(runner, "build").exit_code == 0
    write_bank(project / "banks", "one", items=[item("one", question="New?"), item("two")])
    renamed: list[str] = []
    real = os.replace

    def noting(source: str, target: Path) -> None:
        renamed.append(Path(target).name)
        real(source, target)

    monkeypatch.setattr(ankigen.core.atomic.os, "replace", noting)
    assert invoke(runner, "build").exit_code == 0
    assert renamed[:3] == [".ankigen-issued.json", "one.en.apkg", "ankigen.lock"]


def test_anki_markup_in_author_text_stays_text(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    markup = (
        "[sound:beep.mp3] [latex]x^2[/latex] [$]y[/$] [$$]z[/$$] "
        "[anki:tts lang=en_US]spoken[/anki:tts] [SOUND:upper.mp3]"
    )
    write_bank(
        project / "banks",
        items=[
            item("a", question=f"Which tag? {markup}", explanation=f"See {markup}", choices=2)
            | {"choices": [f"Choice {markup}", "Other"]}
        ],
    )
    assert invoke(runner, "build").exit_code == 0
    collection.import_package(project / "out" / "demo.en.apkg")
    card = collection.col.get_card(collection.col.find_cards("")[0])
    question, answer = card.question(), card.answer()
    assert card.question_av_tags() == [] and card.answer_av_tags() == []
    assert "[anki:play" not in question + answer
    assert "latex" not in "".join(os.listdir(collection.col.media.dir()))
    from html import unescape

    from ankigen.apkg.render import card_sides

    assert markup in unescape(question)
    assert card_sides(tuple(card.note().fields)) == (question, answer)


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        (["caf\u00e9", "cafe\u0301"], "choice 2 looks the same as choice 1"),
        (["two  words", "two words"], "choice 2 looks the same as choice 1"),
        (["zero\u200bwidth", "zerowidth"], "choice 2 looks the same as choice 1"),
    ],
)
def test_lookalike_choices_are_errors(
    project: Path, runner: CliRunner, choices: list[str], message: str
) -> None:
    write_bank(project / "banks", items=[item("a") | {"choices": choices}])
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert message in result.output


@pytest.mark.parametrize("text", ["<b></b>", "<br>", "\u200b", "\ufeff \u2060"])
def test_visually_empty_text_is_an_error(project: Path, runner: CliRunner, text: str) -> None:
    write_bank(project / "banks", items=[item("a", question=text)])
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert "item 'a': question is visually empty" in result.output


def test_bidi_controls_and_duplicate_questions_are_warnings(
    project: Path, runner: CliRunner
) -> None:
    write_bank(
        project / "banks",
        items=[
            item("a", question="Same question?"),
            item("b", question="same  question?"),
            item("c", explanation="Tricky \u202etext"),
        ],
    )
    result = invoke(runner, "lint")
    assert result.exit_code == 0
    assert "item 'b': the same question as item 'a'" in result.output
    assert "bidirectional control character U+202E" in result.output


def test_two_banks_with_one_deck_name_are_an_error(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", "one", deck="Shared")
    write_bank(project / "banks", "two", deck="Shared")
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert "the deck name 'Shared' is also the deck of banks/one/en.yaml" in result.output


@pytest.mark.parametrize("answer", ["010", "0x2", "+2", "1_0", "0b1"])
def test_answers_must_be_plain_numbers(project: Path, runner: CliRunner, answer: str) -> None:
    path = write_bank(project / "banks", items=[item("a", answer=1, choices=8)])
    path.write_text(
        path.read_text(encoding="utf-8").replace("answer: 1", f"answer: {answer}"),
        encoding="utf-8",
    )
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert f"answer '{answer}' must be written as a plain number" in result.output


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [
        ("utf-16", "looks like UTF-16"),
        ("utf-16-le", "looks like UTF-16LE"),
        ("cp1252", "WINDOWS-1252"),
    ],
)
def test_files_in_other_encodings_say_which(
    project: Path, runner: CliRunner, encoding: str, expected: str
) -> None:
    path = write_bank(project / "banks", items=[item("a", question="Café?")])
    path.write_bytes(path.read_text(encoding="utf-8").encode(encoding))
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert expected in result.output and "iconv" in result.output


def _forge_with_a_plain_checksum(entry: Path, change: Any) -> None:
    """What whoever can write OUT, but not this user's key, can make: the entry changed and
    its checksum recomputed as the plain SHA-256 it once was."""
    import hashlib

    rewrite_entry(entry, change, checksum=False)
    head, _, payload = entry.read_bytes().partition(b"\n")
    header = json.loads(head)
    header["checksum"] = hashlib.sha256(payload).hexdigest()
    entry.write_bytes(json.dumps(header).encode() + b"\n" + payload)


@pytest.mark.parametrize(
    "forge",
    [
        lambda h, d: d["bank"]["items"]["question"].__setitem__(0, "Forged, in no bank?"),
        lambda h, d: d["bank"].__setitem__("topic", "../../etc"),
    ],
)
def test_an_entry_made_elsewhere_is_not_used(project: Path, runner: CliRunner, forge: Any) -> None:
    """OUT may come from elsewhere (a CI cache, a shared folder): an entry not made with
    this user's key is ignored, and the deck is built from the bank."""
    rebuilt_after(project, runner, lambda entry: _forge_with_a_plain_checksum(entry, forge))
    assert sorted(p.name for p in project.parent.rglob("*.apkg")) == ["demo.en.apkg"]
    assert b"Forged" not in package_text(project / "out" / "demo.en.apkg")


@pytest.mark.parametrize(
    "forge",
    [
        lambda h, d: d["bank"].__setitem__("topic", "../../etc"),
        lambda h, d: d["bank"].__setitem__("language", "not a tag"),
        lambda h, d: d["bank"]["items"]["answer"].__setitem__(0, (7,)),
        lambda h, d: d["bank"]["items"]["choices"].__setitem__(0, ()),
        lambda h, d: d["bank"]["items"]["id"].__setitem__(0, "../x"),
    ],
)
def test_a_cached_bank_passes_the_readers_checks_even_with_this_users_key(
    project: Path, runner: CliRunner, forge: Any
) -> None:
    """Made with this user's key, as a bug of ankigen's own might make it: an entry whose
    bank the reader would refuse is ignored, and no path is made from it."""
    result = rebuilt_after(project, runner, lambda entry: rewrite_entry(entry, forge))
    assert "internal error" not in result.output
    assert sorted(p.name for p in project.parent.rglob("*.apkg")) == ["demo.en.apkg"]


def test_a_build_cache_made_elsewhere_cannot_pass_a_package_for_up_to_date(
    project: Path, runner: CliRunner
) -> None:
    """OUT restored from elsewhere, its package swapped and the build cache made to
    match it (size, time, inode), but without this user's key: the deck is built again."""
    write_bank(project / "banks", items=[item("one"), item("two")])
    assert invoke(runner, "build").exit_code == 0
    package = project / "out" / "demo.en.apkg"
    good = package.read_bytes()
    package.write_bytes(b"PK forged")
    cache_path = project / "out" / ".ankigen-cache.json"
    cache = read_build_cache(cache_path)
    info = package.stat()
    cache["packages"]["demo.en.apkg"].update(
        size=info.st_size, mtime_ns=info.st_mtime_ns, inode=info.st_ino
    )
    write_build_cache(cache_path, cache, key=b"someone else's key".ljust(32))
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    assert package.read_bytes() == good
    # the control: the same forgery with this user's key is taken, as it must be
    package.write_bytes(b"PK forged")
    cache = read_build_cache(cache_path)
    info = package.stat()
    cache["packages"]["demo.en.apkg"].update(
        size=info.st_size, mtime_ns=info.st_mtime_ns, inode=info.st_ino
    )
    write_build_cache(cache_path, cache)
    assert invoke(runner, "build").stdout.startswith("up to date out/demo.en.apkg")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads a file by its descriptor")
def test_a_build_syncs_what_it_ships_and_not_its_caches(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/safety.md: the packages, the lock and the record of issued times are on disk
    before they take their places; the caches, checked whenever read, are not waited for."""
    synced: set[bytes] = set()
    fsync = os.fsync

    def noting(fd: int) -> None:
        opened = Path(f"/proc/self/fd/{fd}")
        if opened.resolve().is_file():
            synced.add(opened.read_bytes())
        fsync(fd)

    monkeypatch.setattr(os, "fsync", noting)
    write_bank(project / "banks", items=[item("one"), item("two")])
    assert invoke(runner, "build").exit_code == 0
    out = project / "out"
    shipped = [
        out / "demo.en.apkg",
        project / "banks" / "ankigen.lock",
        out / ".ankigen-issued.json",
    ]
    caches = [out / ".ankigen-cache.json", out / ".ankigen-replay.json"]
    caches += list((out / ".ankigen-banks").iterdir())
    assert len(caches) >= 3
    assert [path.name for path in shipped if path.read_bytes() not in synced] == []
    assert [path.name for path in caches if path.read_bytes() in synced] == []


@pytest.mark.parametrize(
    ("place", "said"),
    [
        ("banks/ankigen.lock", "a FIFO (named pipe), not a regular file"),
        ("banks/ankigen.toml", "a FIFO (named pipe), not a regular file"),
        ("out/.ankigen-cache.json", ""),
        ("out/.ankigen-replay.json", ""),
        ("out/.ankigen-issued.json", ""),
        ("out/.ankigen-banks/verdicts.v1", ""),
    ],
)
def test_a_fifo_in_place_of_one_of_ankigens_files_never_blocks(
    project: Path, place: str, said: str
) -> None:
    """A FIFO blocks whoever opens it until a writer comes: ankigen's own files are read
    only if regular. One where the lock or the project file should be is an error of
    `build` and `lint`; one in a cache's place is a cache there is not."""
    write_bank(project / "banks", items=[item("one"), item("two")])
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2] / "src"))
    command = [sys.executable, "-m", "ankigen"]
    assert subprocess.run([*command, "build"], env=env, capture_output=True).returncode == 0
    write_bank(project / "banks", items=[item("one", question="Edited?"), item("two")])
    (project / place).unlink(missing_ok=True)
    os.mkfifo(project / place)
    for name in ("build", "lint"):
        done = subprocess.run([*command, name], env=env, capture_output=True, text=True, timeout=60)
        assert "Traceback" not in done.stderr
        if said:
            assert done.returncode == 1
            assert place in done.stdout + done.stderr
            assert f"cannot read{' the lock file' if 'lock' in place else ''}: {said}" in (
                done.stdout + done.stderr
            )
        elif name == "build":
            assert done.returncode == 0, done.stderr
            assert b"Edited?" in package_text(project / "out" / "demo.en.apkg")


def test_a_lock_linked_to_a_huge_file_is_refused_before_it_is_read(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    """A link to a file of gigabytes was read whole (out of memory, or half a minute)."""
    write_bank(project / "banks")
    huge = tmp_path / "huge"
    with huge.open("wb") as sparse:
        sparse.truncate(3 << 30)  # no disk used
    (project / "banks" / "ankigen.lock").symlink_to(huge)
    for command in ("build", "lint"):
        result = invoke(runner, command)
        assert result.exit_code == 1
        assert "cannot read the lock file: 3,221,225,472 bytes, over the" in result.output


def test_the_preview_s_watch_never_blocks_on_a_fifo_project_file(tmp_path: Path) -> None:
    """`serve` looks at the project file after each save: a FIFO there froze its watch
    for good, the pages going stale without a word."""
    banks = tmp_path / "banks"
    write_bank(banks)
    os.mkfifo(banks / "ankigen.toml")
    probe = (
        "import sys\nfrom pathlib import Path\nfrom ankigen.preview.pages import Memo\n"
        f"Memo().under(Path({str(banks)!r}))\nprint('looked')\n"
    )
    assert run_probe(probe, timeout=60).stdout.strip() == "looked"
