"""A valid bank's text, and random edits of any text: the fuzzing of bank readers."""

from __future__ import annotations

from hypothesis import strategies as st

VALID_BANK = """\
topic: demo
language: en
title: "Demo"
items:
  - id: one
    question: "What is 1 + 1?"
    choices: ["1", "2", "3"]
    answer: 2
    explanation: "Arithmetic."
  - id: two
    question: "Pick both"
    choices: [a, b]
    answer: [1, 2]
    explanation: ok
"""


def mutate(text: str, edits: list[tuple[int, int, str]]) -> str:
    for position, kind, fragment in edits:
        at = position % (len(text) + 1)
        if kind == 0:
            text = text[:at] + fragment + text[at:]
        elif kind == 1:
            text = text[:at] + text[at + len(fragment) + 1 :]
        else:
            text = text[:at] + fragment + text[at + len(fragment) :]
    return text


EDITS = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.integers(0, 2),
        st.text(
            alphabet=st.sampled_from(list(" \n:-[]{}&*!|>'\"#?,0123456789abc\t\x00é؟")), max_size=6
        ),
    ),
    max_size=6,
)
