"""Untranslated text in any script: copied from the reference, or identified as English."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ankigen.bank.workspace import find_bank_paths
from ankigen.checks.run import check_paths
from ankigen.checks.translation import untranslated_items
from ankigen.text import langid
from ankigen.translation.coverage import coverage, matrix_html
from tests.helpers import REPO, invoke, item, write_bank

# The items the source pages left in English, and only those.
ENGLISH_IN_SHIPPED = {
    "data-parallel.ur": {
        "replicated-memory-limit",
        "nccl-algorithm-choice",
        "global-batch-size",
        "scaling-overhead",
        "gradient-accumulation",
    },
    "deepspeed-megatron.hi": {"zero-stage-1", "offloading"},
    "fsdp.bn": {"sharding-lowers-memory", "memory-communication-tradeoff"},
    "fsdp.yo": {"sharding-lowers-memory", "memory-communication-tradeoff"},
    "zero.wo": {"stage-1-state", "sharding-cost"},
}


def test_shipped_banks_flag_exactly_the_english_items() -> None:
    checked = check_paths(find_bank_paths(REPO / "banks"))
    found = {key: set(items) for key, items in untranslated_items(checked.banks).items()}
    assert found == ENGLISH_IN_SHIPPED
    rows = {(r.topic, r.language): r for r in coverage(checked)}
    assert (rows["fsdp", "yo"].translated, rows["fsdp", "yo"].items) == (6, 8)
    assert (rows["zero", "wo"].translated, rows["zero", "wo"].items) == (6, 8)
    # the preview's matrix shows the same: bn, hi, yo and wo each at 6/8
    markup = matrix_html(list(rows.values()))
    assert markup.count('title="8 items, 6 translated, 2 untranslated, 0 missing') == 4
    # yo and wo by the identifier, not by script: their explanations say "in English"
    yo = untranslated_items(checked.banks)["fsdp.yo"]["sharding-lowers-memory"]
    assert {(p.part, p.reason) for p in yo} >= {("question", "in English")}


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # Wolof and Yoruba sentences dense with English terms keep their own grammar
        (
            "Activation checkpointing dafay recompute activations yi ci backward pass bi "
            "ngir save memory.",
            "wo",
        ),
        (
            "Ci data parallelism, gradient yi dañu leen di all-reduce ci backward pass bi, "
            "te optimizer step bi dafay dox ci worker bu nekk.",
            "wo",
        ),
        ("Checkpoint sharded state dict lo fun saving model weights ni distributed training", "yo"),
        # the Yoruba explanation an unrestricted identifier reads as Swahili
        (
            "FSDP pin awọn paramita, gradients ati ipinlẹ iṣapeye (optimizer state) kaakiri awọn "
            "GPU. Ni afiwera data boṣewa, GPU kọọkan ni ẹda kikun ti gbogbo wọn.",
            "yo",
        ),
        # names and terms only
        ("PyTorch FSDP NCCL GPU fp16 torch.distributed", "yo"),
        ("Apache Spark RDDs", "wo"),
    ],
)
def test_no_false_alarms(text: str, language: str) -> None:
    assert langid.identify(text, language, ("en",)) is None


@pytest.mark.parametrize("language", ["yo", "wo", "de", "sw"])
def test_english_is_found_in_latin_script_languages(language: str) -> None:
    text = "Each rank stores a shard of the model state instead of a full copy."
    assert langid.identify(text, language, ("en",)) == "en"
    # not when the bank is English, or English is not a source
    assert langid.identify(text, "en", ("en",)) is None
    assert langid.identify(text, language, ()) is None


def test_masking_keeps_the_sentence_and_drops_the_terms() -> None:
    masked = langid.mask(
        "Ni iwọle sẹhin (backward pass), FSDP lo <code>reduce_scatter()</code> fun fp16 "
        "lori PyTorch."
    )
    assert masked == "Ni iwọle sẹhin , lo fun lori"


def test_copied_text_counts_as_untranslated(project: Path, runner: CliRunner) -> None:
    banks = project / "banks"
    write_bank(
        banks,
        language="en",
        items=[item("a", question="Megatron sharding pipelines?", explanation="State.")],
    )
    write_bank(
        banks,
        language="yo",
        # the same question but for case and spacing; a short text no identifier could judge
        items=[item("a", question="megatron  Sharding pipelines?", explanation="Ipinlẹ.")],
    )
    result = invoke(runner, "lint")
    assert result.output == (
        "banks/demo/yo.yaml:5: warning: item 'a': untranslated? question the same as in 'en'\n"
        "0 errors, 1 warning in 2 banks\n"
    )
    assert "demo   yo            1           0             1" in invoke(runner, "status").output


def test_lint_warns_at_the_item_and_status_counts_it(project: Path, runner: CliRunner) -> None:
    banks = project / "banks"
    english = "Why does sharding lower the memory that each GPU needs during training?"
    write_bank(banks, language="en", items=[item("a"), item("b")])
    write_bank(
        banks,
        language="wo",
        items=[
            item(
                "a",
                question="Lan moo waral optimiser nekk mbaam xuux bi gëna mag ci mémoire?",
                explanation="Adam dafay denc ñaari valeur.",
            ),
            item("b", question=english, explanation="Adam dafay denc."),
        ],
    )
    out = invoke(runner, "lint").output
    assert "banks/demo/wo.yaml:14: warning: item 'b': untranslated? question in English\n" in out
    assert "item 'a'" not in out
    status = invoke(runner, "status").output.splitlines()
    assert status[-1].split() == ["demo", "wo", "2", "1", "1", "0", "0"]


# Sentences in the languages ankigen has function words for, and English ones of the
# kind a half-translated bank holds: what the identifier is spared for must be what
# it would have said.
OWN_SENTENCES = {
    "de": "Jeder Rang speichert nur einen Teil der Parameter, und die Gradienten werden "
    "nach dem Rückwärtsdurchlauf zwischen allen Rängen gemittelt.",
    "fr": "Chaque rang garde une partie des paramètres, et les gradients sont moyennés "
    "entre tous les rangs après la passe arrière.",
    "es": "Cada rango guarda una parte de los parámetros, y los gradientes se promedian "
    "entre todos los rangos después del paso hacia atrás.",
    "pt": "Cada rank guarda uma parte dos parâmetros, e os gradientes são calculados em "
    "média entre todos os ranks depois da passagem para trás.",
    "it": "Ogni rank conserva solo una parte dei parametri, e i gradienti sono mediati tra "
    "tutti i rank dopo il passaggio all'indietro.",
    "nl": "Elke rank bewaart maar een deel van de parameters, en de gradiënten worden na de "
    "achterwaartse stap tussen alle ranks gemiddeld.",
    "sv": "Varje rank sparar bara en del av parametrarna, och gradienterna medelvärdesbildas "
    "mellan alla ranks efter bakåtpasset.",
    "pl": "Każdy rank przechowuje tylko część parametrów, a gradienty są uśredniane między "
    "wszystkimi rankami po przejściu wstecz.",
    "tr": "Her rank parametrelerin yalnızca bir kısmını saklar ve gradyanlar geri geçişten "
    "sonra tüm ranklar arasında ortalanır.",
}
ENGLISH_SENTENCES = [
    "Each rank stores a shard of the model state instead of a full copy.",
    "The gradients are averaged across all ranks after the backward pass, so every "
    "replica takes the same step.",
    "Which collective leaves every rank with the sum of all the tensors?",
    "It is the optimizer state that takes most of the memory in mixed precision.",
    "ZeRO removes the redundancy of the optimizer state, the gradients and the parameters.",
]


def _shipped_texts() -> list[tuple[str, str]]:
    checked = check_paths(find_bank_paths(REPO / "banks"))
    return [
        (text, bank.language)
        for bank in checked.banks
        for item in bank.items
        for text in (item.question, item.explanation, *item.choices, *item.whys)
        if text
    ]


def test_a_decision_without_the_identifier_is_the_identifiers() -> None:
    cases = _shipped_texts()
    cases += [(text, own) for own in OWN_SENTENCES for text in ENGLISH_SENTENCES]
    cases += [(text, own) for own, text in OWN_SENTENCES.items()]
    cases += [(text, other) for text in OWN_SENTENCES.values() for other in OWN_SENTENCES]
    decided = 0
    for text, own in cases:
        own = langid.primary(own)
        candidates = langid._candidates(own, ("en",))
        tokens = langid.words(langid.mask(text))[: langid.MAX_WORDS]
        if not candidates or len(tokens) < langid.MIN_WORDS:
            continue
        found = langid.decisive(tokens, own, candidates)
        if found is not None:
            decided += 1
            assert langid._judge(" ".join(tokens), own, candidates) == found, (text, own)
    assert decided >= len(OWN_SENTENCES) * len(ENGLISH_SENTENCES)  # the shortcut is taken


def test_models_unloaded_to_make_room_are_loaded_again_with_the_same_verdicts() -> None:
    """A process keeps the models of `MODELS_HELD` bank languages at a time (lingua's take
    about 28 MiB each): a language whose models were unloaded is judged as before."""
    judge = langid._judge.__wrapped__  # the identifier itself, not its remembered verdicts
    english = "the gradient of every shard is reduced across the ranks before the update"
    german = "der Gradient jedes Teils wird vor der Aktualisierung über alle Ränge reduziert"
    first = [judge(text, "de", ("en",)) for text in (english, german)]
    assert first == ["en", None]
    for other in ("fr", "es", "it", "nl"):
        judge(english, other, ("en",))
        assert len(langid._held) <= langid.MODELS_HELD and "en" not in langid._held
    assert "de" not in langid._held  # unloaded to make room
    assert [judge(text, "de", ("en",)) for text in (english, german)] == first


def test_languages_with_function_words_are_known_by_the_identifier_s_names() -> None:
    """`known` and `language_name` answer for these without loading lingua: lingua must
    agree, or an upgrade that dropped one would go unseen."""
    from lingua import IsoCode639_1, Language

    for code in langid.FUNCTION_WORDS:
        language = Language.from_iso_code_639_1(getattr(IsoCode639_1, code.upper()))
        assert langid.language_name(code) == language.name.title()
    assert langid._NAMES.keys() == langid.FUNCTION_WORDS.keys()


def test_text_decided_by_its_function_words_is_reported_without_loading_the_identifier(
    tmp_path: Path,
) -> None:
    """lingua took 2 ms to load in an edit whose one changed text needed no identifier."""
    import subprocess
    import sys

    english = "the gradient of every shard is reduced across the ranks before the update"
    write_bank(tmp_path, language="de", items=[item("one", question=f"{english}?")])
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from ankigen.checks.run import check_paths\n"
        "checked = check_paths([Path(sys.argv[1])])\n"
        "print(*[d.message for d in checked.diagnostics], sep='\\n')\n"
        "print('lingua' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "demo" / "de.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    *messages, loaded = done.stdout.splitlines()
    assert any("in English" in message for message in messages), messages
    assert loaded == "False"
