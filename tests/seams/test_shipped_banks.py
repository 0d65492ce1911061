"""The decks we ship: built from the seed pages, verbatim, answered, and importable."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankigen.bank.model import Bank
from ankigen.bank.workspace import find_bank_paths
from ankigen.checks.run import check_paths
from ankigen.formats.page import parse_page
from tests.helpers import REPO, AnkiCollection, invoke

# the quiz pages the shipped banks were imported from, as copied from the web
SEEDS = REPO / "tests" / "data" / "seeds"
SEED_BANKS = {
    "000_b95ac5be61cb598b.txt": ("fsdp", "bn"),
    "001_d88ee34ff81b4731.txt": ("fsdp", "yo"),
    "002_e69017660af29642.txt": ("deepspeed-megatron", "hi"),
    "003_4451d1e91acaad7c.txt": ("data-parallel", "ur"),
    "004_abb82d98e508ac90.txt": ("zero", "wo"),
}
# the only edit to seed text: a translation tool's placeholder in seed 001
PLACEHOLDER_FIX = ("_AIU_PROTECTED_11__", "ti Google")


def shipped() -> dict[tuple[str, str], Bank]:
    checked = check_paths(find_bank_paths(REPO / "banks"))
    assert checked.errors == 0
    return {(b.topic, b.language): b for b in checked.banks}


def test_at_least_ten_decks_in_every_topic_with_an_english_reference() -> None:
    banks = shipped()
    assert len(banks) >= 10
    topics = {topic for topic, _ in banks}
    assert topics == {"fsdp", "deepspeed-megatron", "data-parallel", "zero", "collectives"}
    assert all((topic, "en") in banks for topic in topics)
    assert sum(len(b.items) for b in banks.values()) >= 80


def test_the_collectives_bank_uses_every_item_feature() -> None:
    bank = shipped()[("collectives", "en")]
    items = bank.items
    assert all(len(i.whys) == len(i.choices) and all(i.whys) for i in items)
    texts = [t for i in items for t in (i.question, *i.choices, *i.whys, i.explanation)]
    assert sum("```python" in t for t in texts) >= 3
    assert sum("\\(" in t for t in texts) >= 10 and any("\\[" in t for t in texts)
    assert [i.id for i in items if i.recall] == [
        "all-gather-before-forward",
        "broadcast-initial-weights",
    ]
    assert any(len(i.answer) > 1 for i in items)


@pytest.mark.parametrize("seed", sorted(SEED_BANKS))
def test_seed_banks_keep_the_seed_text_verbatim(seed: str) -> None:
    page = parse_page((SEEDS / seed).read_text(encoding="utf-8"))
    bank = shipped()[SEED_BANKS[seed]]
    expected = [
        (
            item.question.replace(*PLACEHOLDER_FIX),
            tuple(c.replace(*PLACEHOLDER_FIX) for c in item.choices),
        )
        for item in page.items
    ]
    assert [(i.question, i.choices) for i in bank.items] == expected
    assert bank.title == page.title
    assert all(i.explanation for i in bank.items)


def test_every_language_of_a_topic_has_the_same_items_and_answers() -> None:
    banks = shipped()
    by_topic: dict[str, list[Bank]] = {}
    for (topic, _), bank in banks.items():
        by_topic.setdefault(topic, []).append(bank)
    for topic, group in by_topic.items():
        keys = {
            bank.language: [(i.id, i.answer, len(i.choices)) for i in bank.items] for bank in group
        }
        assert len({tuple(v) for v in keys.values()}) == 1, (topic, keys)


def test_shipped_banks_build_and_import_into_anki(
    tmp_path: Path, runner: CliRunner, collection: AnkiCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    banks = tmp_path / "banks"
    shutil.copytree(REPO / "banks", banks)
    lock_before = (banks / "ankigen.lock").read_bytes()
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    # the committed lock already matches the shipped banks: nothing looks changed
    assert (banks / "ankigen.lock").read_bytes() == lock_before
    lines = result.stdout.splitlines()
    assert lines and all("(0 new, 0 changed, 8 unchanged, 0 removed)" in line for line in lines)
    packages = sorted((tmp_path / "out").glob("*.apkg"))
    assert len(packages) == len(shipped())
    for package in packages:
        log = collection.import_package(package)
        assert (log.new, log.conflicting) == (8, 0)
    assert len(collection.notes()) == 8 * len(packages)
    # one deck per package, under "Distributed training::<topic>" (banks/ankigen.toml)
    leaves = {name for name in collection.deck_names() if name.count("::") == 2}
    assert len(leaves) == len(packages)
    assert collection.deck_names() - leaves == {
        "Distributed training",
        "Distributed training::FSDP",
        "Distributed training::DeepSpeed and Megatron",
        "Distributed training::Data parallelism",
        "Distributed training::ZeRO",
        "Distributed training::Collective operations",
    }
    assert collection.note_by_item("sharded-state", "bn")["Correct"] == "1"
    assert collection.note_by_item("replicated-memory-limit", "ur")["Direction"] == "rtl"
