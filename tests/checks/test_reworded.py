"""Texts still in the reference's language but reworded since (the reference edited after
translating): found by the words they share with the reference, without the identifier."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from ankigen.bank.workspace import find_bank_paths
from ankigen.checks import reference_texts, translation
from ankigen.checks.run import check_paths
from ankigen.text import langid
from tests.helpers import REPO, item, write_bank

# English as a reference holds it, a quarter of it grammar words: too few for the function
# words alone to decide (`langid.decisive`), enough to be asked of the identifier
REFERENCE = (
    "Activation checkpointing recomputes the forward activations of every pipeline stage in "
    "the backward pass, trading compute time against GPU memory for 16 micro batches"
)
REWORDED = (
    "Activation checkpointing recomputes the forward activations of each pipeline stage in "
    "the backward pass, trading compute time against activation memory for 32 micro batches "
    "by default"
)
TRANSLATED = (
    "Activation checkpointing berechnet die Aktivierungen jeder Stufe während des "
    "Rückwärtsdurchlaufs neu, statt sie im GPU-Speicher zu halten"
)


@pytest.fixture
def judged() -> Iterator[list[str]]:
    """The texts lingua is asked about, counted by a wrapper that lets each call through
    to the identifier (the memos emptied, so that nothing is answered from them)."""
    calls: list[str] = []
    real: Callable[[str, str, tuple[str, ...]], str | None] = langid._judge

    def counting(masked: str, own: str, candidates: tuple[str, ...]) -> str | None:
        calls.append(masked)
        return real.__wrapped__(masked, own, candidates)  # type: ignore[attr-defined]

    translation.forget_texts()
    reference_texts.forget()
    langid._judge = counting  # type: ignore[assignment]
    try:
        yield calls
    finally:
        langid._judge = real  # type: ignore[assignment]
        translation.forget_texts()
        reference_texts.forget()


def _project(tmp_path: Path, question: str) -> list[Path]:
    en = write_bank(tmp_path, items=[item("a", question=f"{REFERENCE}?"), item("b")])
    translated = item("b", question="Frage b?", explanation="Erklärung b.")
    de = write_bank(tmp_path, language="de", items=[item("a", question=f"{question}?"), translated])
    return [en, de]


def test_the_text_is_one_the_identifier_would_be_asked_about() -> None:
    tokens = langid.words(langid.mask(REWORDED))[: langid.MAX_WORDS]
    assert langid.grammar_share(tokens, "en") >= langid.MIN_GRAMMAR_SHARE
    assert langid.decisive(tokens, "de", ("en",)) is None
    assert langid._judge.__wrapped__(" ".join(tokens), "de", ("en",)) == "en"  # type: ignore[attr-defined]


def test_a_reworded_reference_text_is_untranslated_without_the_identifier(
    tmp_path: Path, judged: list[str]
) -> None:
    checked = check_paths(_project(tmp_path, REWORDED))
    messages = [d.message for d in checked.diagnostics if "untranslated?" in d.message]
    assert messages == ["item 'a': untranslated? question in English"]
    assert judged == []


def test_without_its_reference_beside_it_the_identifier_decides_as_before(
    tmp_path: Path, judged: list[str]
) -> None:
    _, de = _project(tmp_path, REWORDED)
    # the reference is beside it, but of another topic
    (tmp_path / "demo" / "en.yaml").write_text(
        (tmp_path / "demo" / "en.yaml").read_text().replace("topic: demo", "topic: other")
    )
    checked = check_paths([de])
    messages = [d.message for d in checked.diagnostics if "untranslated?" in d.message]
    assert messages == ["item 'a': untranslated? question in English"]
    assert len(judged) == 1


def test_a_translation_that_keeps_the_reference_s_terms_is_not_taken_for_it(
    tmp_path: Path, judged: list[str]
) -> None:
    checked = check_paths(_project(tmp_path, TRANSLATED))
    assert not [d for d in checked.diagnostics if "untranslated?" in d.message]


class _IndentedLists(yaml.SafeDumper):
    """Lists laid out indented under their key (`items:` then `  - id:`), as the shipped
    banks and many written by hand are; PyYAML's own layout leaves them flush."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


@pytest.mark.parametrize("indented", [False, True])
def test_a_few_items_are_looked_for_as_the_whole_reference_reads_them(
    tmp_path: Path, indented: bool
) -> None:
    """An edit reads only its items in the reference (`reference_texts.FEW`): they must
    come out as reading the whole bank gives them, however its list is indented (an
    indented one gave none, and an edit's texts went to the identifier)."""
    items = [
        item(f"i{n}", question=f"{REFERENCE} {n}?", explanation=f"{REWORDED}.") for n in range(40)
    ]
    items.append(item("code", question="Which call?\n\n```python\nx = 1\n```\n"))
    reference = write_bank(tmp_path, items=items)
    if indented:
        data = yaml.safe_load(reference.read_text(encoding="utf-8"))
        laid_out = yaml.dump(data, Dumper=_IndentedLists, allow_unicode=True, sort_keys=False)
        assert "\n  - id: i0\n" in laid_out
        reference.write_text(laid_out, encoding="utf-8")
    de = write_bank(tmp_path, language="de", items=items)
    bank = check_paths([de]).banks[0]
    wanted = ["i3", "code", "i39", "missing"]
    reference_texts.forget()
    whole = reference_texts.beside(bank, ("en",), [i["id"] for i in items])
    few = reference_texts.beside(bank, ("en",), wanted)
    assert whole is not None and few is not None
    assert few[0] == whole[0] == "en"
    # the same words (the bank reader trims a block's last line breaks; words are what
    # `langid.shares_most` compares)
    assert set(few[1]) == {"i3", "code", "i39"}
    for found in few[1]:
        assert [langid.words(t) for t in few[1][found]] == [
            langid.words(t) for t in whole[1][found]
        ]


# What the shortcut says must be what the identifier would have said: on the shipped
# banks (each translation's text with its reference's), and on the sentences of
# tests/checks/test_translation.py's corpus, as translations and reworded
REWORDINGS = [
    (
        "Each rank stores a shard of the model state instead of a full copy.",
        "Each rank keeps one shard of the model state instead of a full copy, as before.",
    ),
    (
        "The gradients are averaged across all ranks after the backward pass, so every "
        "replica takes the same step.",
        "The gradients are summed across all ranks after the backward pass, so that every "
        "replica takes one step.",
    ),
    (
        "Which collective leaves every rank with the sum of all the tensors?",
        "Which collective leaves each rank with the sum of the tensors, in NCCL 2.18?",
    ),
    (
        "It is the optimizer state that takes most of the memory in mixed precision.",
        "It is the optimizer state that takes the most memory in mixed precision with fp16.",
    ),
]
OWN = {
    "de": "Jeder Rang speichert nur einen Teil des Modellzustands statt einer vollen Kopie.",
    "fr": "Chaque rang garde une partie de l'état du modèle au lieu d'une copie complète.",
    "es": "Cada rango guarda una parte del estado del modelo en lugar de una copia completa.",
    "it": "Ogni rank conserva una parte dello stato del modello invece di una copia completa.",
    "nl": "Elke rank bewaart een deel van de modeltoestand in plaats van een volledige kopie.",
    "yo": "Ipo kọọkan tọju apakan ti ipo awoṣe dipo ẹda kikun.",
    "wo": "Rank bu nekk dafay denc benn pàcc ci model state bi, du copie bu mat.",
}


def _shortcut(text: str, like: str, own: str) -> str | None:
    """What the shortcut decides, where it decides; None where it leaves the text."""
    candidates = langid._candidates(own, ("en",))
    tokens = langid.words(langid.mask(text))[: langid.MAX_WORDS]
    if len(tokens) < langid.MIN_WORDS or langid.grammar_share(tokens, "en") < 0.2:
        return None
    if langid.decisive(tokens, own, candidates) is not None:
        return None
    return "en" if langid.shares_most(tokens, like) else None


def test_the_shortcut_says_what_the_identifier_says() -> None:
    judge = langid._judge.__wrapped__  # type: ignore[attr-defined]
    cases: list[tuple[str, str, str]] = []
    checked = check_paths(find_bank_paths(REPO / "banks"))
    references = {b.topic: b for b in checked.banks if b.language == "en"}
    for bank in checked.banks:
        reference = references.get(bank.topic)
        if bank.language == "en" or reference is None:
            continue
        ref_items = {i.id: i for i in reference.items}
        for it in bank.items:
            ref = ref_items.get(it.id)
            if ref is not None:
                cases += [(it.question, ref.question, bank.language)]
                cases += [(it.explanation, ref.explanation, bank.language)]
    for original, reworded in REWORDINGS:
        cases += [(reworded, original, own) for own in OWN]
        cases += [(text, original, own) for own, text in OWN.items()]
    decided = 0
    for text, like, own in cases:
        found = _shortcut(text, like, langid.primary(own))
        if found is None:
            continue
        decided += 1
        tokens = langid.words(langid.mask(text))[: langid.MAX_WORDS]
        candidates = langid._candidates(langid.primary(own), ("en",))
        assert judge(" ".join(tokens), langid.primary(own), candidates) == found, (text, own)
    assert decided >= len(OWN) * 2  # the shortcut is taken
    # and a translation never shares most of its words with its reference
    assert all(_shortcut(text, REWORDINGS[0][0], own) is None for own, text in OWN.items())
