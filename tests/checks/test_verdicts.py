"""The language identifier's verdicts kept in OUT by text (`checks.verdicts`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankigen.checks import reference_texts, translation, verdicts
from ankigen.checks.run import check_paths
from ankigen.core import secret
from ankigen.text import langid
from tests.helpers import invoke, item, write_bank

# English that only the identifier can tell (a quarter of it function words), in a German
# bank whose topic has no other language to compare it with
ENGLISH = (
    "Activation checkpointing recomputes the forward activations of each pipeline stage in "
    "the backward pass, trading compute time against activation memory for micro batches"
)
OTHER = (
    "Gradient accumulation sums the gradients of several micro batches in the same step, "
    "trading time against memory for large global batches on each data parallel rank"
)
WARNING = "item 'a': untranslated? question in English"


@pytest.fixture
def judged() -> Iterator[list[str]]:
    """The texts lingua is asked about, counted by a wrapper that lets each call through;
    the memos emptied, and the process's remembered verdicts forgotten, before and after."""
    calls: list[str] = []
    real: Callable[[str, str, tuple[str, ...]], str | None] = langid._judge

    def counting(masked: str, own: str, candidates: tuple[str, ...]) -> str | None:
        calls.append(masked)
        return real.__wrapped__(masked, own, candidates)  # type: ignore[attr-defined]

    def forget() -> None:
        translation.forget_texts()
        reference_texts.forget()
        langid._remembered.clear()
        langid._learned = None
        verdicts._used = None

    forget()
    langid._judge = counting  # type: ignore[assignment]
    try:
        yield calls
    finally:
        langid._judge = real  # type: ignore[assignment]
        forget()


def _check(bank: Path, cache: Path) -> list[str]:
    """The bank's untranslated warnings, checked as a build's worker checks it: answered
    from the verdicts at `cache`, and the new ones written there as the build does."""
    translation.forget_texts()
    verdicts._used = None  # as in a new process
    verdicts.use(str(cache))
    checked = check_paths([bank])
    verdicts.Verdicts(cache).save()
    return [d.message for d in checked.diagnostics if "untranslated?" in d.message]


def test_a_text_judged_once_is_not_judged_again(tmp_path: Path, judged: list[str]) -> None:
    bank = write_bank(tmp_path, language="de", items=[item("a", question=f"{ENGLISH}?")])
    cache = tmp_path / "out" / verdicts.NAME
    cache.parent.mkdir()
    assert _check(bank, cache) == [WARNING]
    assert len(judged) == 1
    assert list(verdicts.read(cache).values()) == ["en"]
    assert _check(bank, cache) == [WARNING]  # from the cache
    assert len(judged) == 1


def test_a_changed_text_is_judged_again(tmp_path: Path, judged: list[str]) -> None:
    cache = tmp_path / "out" / verdicts.NAME
    cache.parent.mkdir()
    bank = write_bank(tmp_path, language="de", items=[item("a", question=f"{ENGLISH}?")])
    _check(bank, cache)
    bank = write_bank(
        tmp_path,
        language="de",
        items=[item("a", question=f"{ENGLISH}?"), item("b", question=f"{OTHER}?")],
    )
    found = _check(bank, cache)
    assert found == [WARNING, WARNING.replace("'a'", "'b'")]
    assert len(judged) == 2  # the new text alone
    assert len(verdicts.read(cache)) == 2  # both kept


def _forged(cache: Path, verdict: str, key: bytes | None = None) -> None:
    """A verdict file saying `verdict` of ENGLISH in a German bank, signed with `key`
    (this user's if None)."""
    tokens = langid.words(langid.mask(ENGLISH))[: langid.MAX_WORDS]
    digest = langid.verdict_key(" ".join(tokens), "de", ("en",))
    cache.parent.mkdir(parents=True, exist_ok=True)
    if key is None:
        cache.write_bytes(secret.signed_record({"verdicts": [[digest, verdict]]}))
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(secret, "cache_key", lambda: key)
        cache.write_bytes(secret.signed_record({"verdicts": [[digest, verdict]]}))


def test_verdicts_of_another_user_s_key_are_ignored(tmp_path: Path, judged: list[str]) -> None:
    bank = write_bank(tmp_path, language="de", items=[item("a", question=f"{ENGLISH}?")])
    cache = tmp_path / "out" / verdicts.NAME
    _forged(cache, "", key=bytes(secret.KEY_BYTES))
    assert verdicts.read(cache) == {}
    assert _check(bank, cache) == [WARNING]  # the identifier asked, not the forged file
    assert len(judged) == 1
    _forged(cache, "")  # the same, signed with this user's key: taken at its word
    assert _check(bank, cache) == []
    assert len(judged) == 1


def test_a_cold_build_reuses_the_verdicts_of_another_branch(
    project: Path, runner: CliRunner
) -> None:
    """A build from scratch (no lock, no packages, no bank cache entries) with the
    verdicts file of another checkout: the texts it knows are not judged again. Proved
    by a verdict no identifier would give, in this user's name."""
    write_bank(project / "banks", language="de", items=[item("a", question=f"{ENGLISH}?")])
    assert "1 warning in the banks" in invoke(runner, "build").output
    cache = project / "out" / ".ankigen-banks" / verdicts.NAME
    assert list(verdicts.read(cache).values()) == ["en"]  # the build kept it
    other = project.parent / "other"
    (other / "out" / ".ankigen-banks").mkdir(parents=True)
    (other / "banks").mkdir()
    (other / "banks" / "demo").mkdir()
    (other / "banks" / "demo" / "de.yaml").write_bytes(
        (project / "banks" / "demo" / "de.yaml").read_bytes()
    )
    _forged(other / "out" / ".ankigen-banks" / verdicts.NAME, "")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(other)
        output = invoke(runner, "build").output
    assert "warning" not in output, output


def test_the_oldest_verdicts_make_room(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file keeps the newest `MAX_KEPT`, a verdict given again counting as new."""
    monkeypatch.setattr(verdicts, "MAX_KEPT", 3)
    cache = tmp_path / verdicts.NAME
    for batch in ({"a": "en", "b": ""}, {"c": "en", "d": ""}, {"a": "en"}):
        kept = verdicts.Verdicts(cache)
        kept.learn(batch)
        kept.save()
    assert list(verdicts.read(cache).items()) == [("c", "en"), ("d", ""), ("a", "en")]
