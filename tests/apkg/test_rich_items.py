"""Richer items: a `why` per choice, code blocks, math and recall-first, from bank to note.

The card side of each is in tests/card/test_chromium_rich.py.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from click.testing import CliRunner

from ankigen.apkg.note import note_content
from ankigen.apkg.render import card_sides
from ankigen.bank.files import Source
from ankigen.bank.reader import parse_bank
from ankigen.checks.cache_entry import dump, load
from ankigen.text.markup import code_html, rich_html
from tests.helpers import AnkiCollection, invoke, item, write_bank

RICH = r"""topic: rich
language: en
title: Rich
recall: true
items:
  - id: whys
    question: Which collective leaves the same sum on every rank?
    choices:
      - text: All-reduce
        why: Every rank ends with the sum.
      - text: Broadcast
        why: It copies one rank's tensor; nothing is summed.
      - Gather
    answer: 1
    explanation: All-reduce.
    recall: false
  - id: code
    question: |
      What does this print on 8 GPUs?
      ```python
      print(dist.get_world_size())  # <b>not bold</b> & "quoted"
      ```
    choices: ["8", "1"]
    answer: 1
    explanation: The world size.
  - id: math
    question: What does a ring all-reduce send per rank, for \(n\) ranks and \(S\) bytes?
    choices: ['\(2\frac{n-1}{n}S\)', '\(nS\)']
    answer: 1
    explanation: |
      Reduce-scatter, then all-gather:
      \[2\frac{n-1}{n}S\]
"""


def test_choices_may_carry_a_why_and_plain_strings_keep_working() -> None:
    bank, problems = parse_bank("rich.yaml", RICH.encode())
    assert problems == [] and bank is not None
    whys, code, _math = bank.items
    assert whys.choices == ("All-reduce", "Broadcast", "Gather")
    assert whys.whys == (
        "Every rank ends with the sum.",
        "It copies one rank's tensor; nothing is summed.",
        "",
    )
    assert (whys.why(2), whys.why(3)) == ("It copies one rank's tensor; nothing is summed.", "")
    assert code.whys == () and code.why(1) == ""
    assert whys.lines["choice 1"] == 9 and whys.lines["choice 3"] == 13


def test_recall_defaults_from_the_bank_and_items_may_override_it() -> None:
    bank, _ = parse_bank("rich.yaml", RICH.encode())
    assert bank is not None and bank.recall
    assert [i.recall for i in bank.items] == [False, True, True]
    fields = [note_content(bank, i).fields for i in bank.items]
    # the frozen Shuffle field carries the flags
    assert [f[5] for f in fields] == ["shuffle", "shuffle recall", "shuffle recall"]


def test_whys_live_inside_each_choice_and_the_answer_holds_only_the_text() -> None:
    bank, _ = parse_bank("rich.yaml", RICH.encode())
    assert bank is not None
    fields = note_content(bank, bank.items[0]).fields
    assert fields[1] == (
        '<ol><li data-choice="1" data-correct="true">All-reduce'
        '<div class="ag-why">Every rank ends with the sum.</div></li>'
        '<li data-choice="2">Broadcast'
        '<div class="ag-why">It copies one rank\'s tensor; nothing is summed.</div></li>'
        '<li data-choice="3">Gather</li></ol>'
    )
    assert fields[2] == "All-reduce"


def test_code_is_highlighted_into_sanitized_class_names() -> None:
    bank, _ = parse_bank("rich.yaml", RICH.encode())
    assert bank is not None
    question = note_content(bank, bank.items[1]).fields[0]
    assert question.startswith('What does this print on 8 GPUs?<div class="ag-code"><pre>')
    assert '<span class="nb">print</span>' in question
    # author markup inside code is code: shown, never run or applied
    assert '# &lt;b&gt;not bold&lt;/b&gt; &amp; "quoted"' in question
    assert "<script" not in question and "style=" not in question


def test_the_sanitizer_keeps_only_pygments_class_names() -> None:
    html = code_html('x = "</pre><script>alert(1)</script>"', "python")
    assert "<script" not in html and "&lt;script&gt;" in html
    assert rich_html("```\n<img src=x onerror=alert(1)>\n```") == (
        '<div class="ag-code"><pre><span></span><code>&lt;img src=x onerror=alert(1)&gt;\n'
        "</code></pre></div>"
    )


def test_text_around_code_keeps_inline_tags_and_line_breaks() -> None:
    html = rich_html("Look <b>here</b>:\n```sh\nls -l\n```\nthen\nthere")
    assert html.startswith('Look <b>here</b>:<div class="ag-code">')
    assert html.endswith("</div>then<br>there")
    assert rich_html("inline <code>x = 1</code> stays") == "inline <code>x = 1</code> stays"


def test_math_passes_through_untouched() -> None:
    bank, _ = parse_bank("rich.yaml", RICH.encode())
    assert bank is not None
    fields = note_content(bank, bank.items[2]).fields
    assert fields[0] == (
        r"What does a ring all-reduce send per rank, for \(n\) ranks and \(S\) bytes?"
    )
    assert r'<li data-choice="1" data-correct="true">\(2\frac{n-1}{n}S\)</li>' in fields[1]
    assert fields[3] == r"Reduce-scatter, then all-gather:<br>\[2\frac{n-1}{n}S\]"
    assert rich_html(r"\(a < b \& c\)") == r"\(a &lt; b \&amp; c\)"


def test_the_bank_cache_keeps_whys_and_recall() -> None:
    data = RICH.encode()
    source = Source(Path("rich.yaml"), data, hashlib.sha256(data).hexdigest())
    loaded = parse_bank("rich.yaml", data)
    bank, _ = load(source, dump(source, loaded, ("en",)), ("en",))
    assert bank == loaded[0]
    assert bank is not None and bank.items[0].whys[0] == "Every rank ends with the sum."
    assert bank.recall and [i.recall for i in bank.items] == [False, True, True]
    assert bank.items[0].lines["choice 3"] == 13


MATH_AND_CODE_PROBLEMS = r"""topic: bad
language: en
title: Bad
items:
  - id: a
    question: |
      First line.
      Unclosed \(x + y
      here.
    choices: ['\(a\)', 'b \)']
    answer: 1
    explanation: |
      ```brainfork
      +++
      ```
      and \[ x \) wrong.
  - id: b
    question: 'Code: <code>\(</code> is not math'
    choices:
      - text: x
        why: "```python"
        wy: typo
      - y
    answer: 1
    explanation: ok
"""


def test_lint_reports_math_and_code_problems_at_their_lines(
    project: Path, runner: CliRunner
) -> None:
    (project / "banks" / "bad.yaml").write_text(MATH_AND_CODE_PROBLEMS, encoding="utf-8")
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert result.output == (
        "banks/bad.yaml:8: error: item 'a': question: math: \\( is never closed by \\)\n"
        "banks/bad.yaml:10: error: item 'a': choice 2: math: \\) closes nothing\n"
        "banks/bad.yaml:13: warning: item 'a': explanation: code block: unknown language "
        "'brainfork'; shown without highlighting\n"
        "banks/bad.yaml:16: error: item 'a': explanation: math: \\) where \\] should "
        "close the \\[ opened\n"
        "banks/bad.yaml:21: error: item 'b': choice 1: why: code block opened with ``` is never "
        "closed\n"
        "banks/bad.yaml:22: error: item 'b': choice 1: unknown key 'wy'; did you mean 'why'?\n"
        "5 errors, 1 warning in 1 bank\n"
    )


def test_math_in_double_quotes_gets_a_hint(project: Path, runner: CliRunner) -> None:
    (project / "banks" / "m.yaml").write_text(
        'topic: m\nlanguage: en\ntitle: "\\(x\\)"\nitems: []\n', encoding="utf-8"
    )
    assert invoke(runner, "lint").output.startswith(
        "banks/m.yaml:3: error: YAML syntax: found unknown escape character; "
        "in double quotes write a backslash as \\\\, or use single quotes\n"
    )


def test_a_choice_mapping_needs_its_text(project: Path, runner: CliRunner) -> None:
    write_bank(
        project / "banks",
        items=[item("a") | {"choices": [{"why": "because"}, "b"]}],
    )
    result = invoke(runner, "lint")
    assert "banks/demo/en.yaml:8: error: item 'a': choice 1: missing key 'text'" in result.output
    assert result.exit_code == 1


def test_lint_warns_when_a_translation_lacks_the_references_why(
    project: Path, runner: CliRunner
) -> None:
    with_whys = {"choices": [{"text": "a", "why": "A."}, {"text": "b", "why": "B."}, "c"]}
    write_bank(project / "banks", "demo", "en", items=[item("q", choices=3) | with_whys])
    write_bank(
        project / "banks",
        "demo",
        "de",
        items=[
            item("q", choices=3, question="Welche?", explanation="Darum.")
            | {"choices": ["a", {"text": "b", "why": "B."}, "c"]}
        ],
    )
    write_bank(
        project / "banks",
        "demo",
        "fr",
        items=[
            item("q", choices=3, question="Laquelle ?", explanation="Parce que.")
            | {"choices": ["a", "b", "c"]}
        ],
    )
    result = invoke(runner, "lint")
    assert result.exit_code == 0
    assert result.output == (
        "banks/demo/de.yaml:8: warning: item 'q': choice 1 has no 'why'; in 'en' it has one\n"
        "banks/demo/fr.yaml:8: warning: item 'q': choices 1, 2 have no 'why'; in 'en' they "
        "have one\n"
        "0 errors, 2 warnings in 3 banks\n"
    )


def test_code_and_math_do_not_count_as_untranslated_or_placeholders(
    project: Path, runner: CliRunner
) -> None:
    write_bank(
        project / "banks",
        language="ur",
        items=[
            {
                "id": "a",
                "question": "یہ کیا چھاپے گا؟\n```python\nprint('%s of {0} ranks' % world_size)\n"
                "# a long English comment that is code, not text\n```",
                "choices": [
                    {"text": r"\(\frac{1}{2}\)", "why": "آدھا"},
                    {"text": "کچھ نہیں", "why": "غلط"},
                ],
                "answer": 1,
                "explanation": "درست",
            }
        ],
    )
    assert invoke(runner, "lint").output == "0 errors, 0 warnings in 1 bank\n"


def test_rendering_of_rich_items_matches_ankis_own_renderer(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    (project / "banks" / "rich.yaml").write_text(RICH, encoding="utf-8")
    assert invoke(runner, "build").exit_code == 0
    collection.import_package(project / "out" / "rich.en.apkg")
    cards = [collection.col.get_card(c) for c in collection.col.find_cards("")]
    assert len(cards) == 3
    for card in cards:
        question, answer = card.question(), card.answer()
        assert card_sides(tuple(card.note().fields)) == (question, answer)
    # Anki keeps math, code markup and whys as ankigen wrote them
    rendered = "".join(c.answer() for c in cards)
    assert r"\(2\frac{n-1}{n}S\)" in rendered and r"\[2\frac{n-1}{n}S\]" in rendered
    assert '<span class="nb">print</span>' in rendered
    assert '<div class="ag-why">Every rank ends with the sum.</div>' in rendered


def test_anki_markup_in_code_is_code() -> None:
    html = rich_html("```\nplay('[sound:ring.mp3]')  # and [latex]x[/latex]\n```")
    assert "[sound:" not in html and "&#91;sound:ring.mp3]" in html
    assert "[latex]" not in html


def test_a_problem_in_a_quoted_text_of_several_lines_is_at_that_text(
    project: Path, runner: CliRunner
) -> None:
    """`"a\\nb"` is one line of the file however many lines it holds: a problem on its
    tenth line was reported nine lines further down, at another item (an import named
    the wrong question)."""
    lines = "\\n".join(f"line {n}" for n in range(1, 11))
    (project / "banks" / "q.yaml").write_text(
        "topic: q\nlanguage: en\ntitle: Q\nitems:\n"
        f'  - id: a\n    question: "Which?\\n{lines}\\n```python"\n'
        "    choices: [x, y]\n    answer: 1\n    explanation: ok\n"
        "  - id: b\n    question: Next?\n    choices: [x, y]\n    answer: 1\n"
        "    explanation: ok\n",
        encoding="utf-8",
    )
    result = invoke(runner, "lint")
    assert result.output.startswith(
        "banks/q.yaml:6: error: item 'a': question: code block opened with ``` is never closed\n"
    ), result.output
