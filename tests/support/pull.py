"""The bank the pull tests start from: edited by hand, with comments, quoting, a why,
code and a formula, so that a pull must keep what a person wrote."""

BANK = """\
# the collectives quiz: edited by hand, comments and quoting must stay
topic: demo
language: en
title: demo quiz
items:
  - id: one
    question: 'Which collective sums across ranks?'   # keep this comment
    choices:
      - text: all-reduce
        why: It sums and gives the result to every rank.
      - broadcast
      - scatter
    answer: 1
    explanation: |
      Reduce-scatter, then all-gather:
      ```python
      dist.all_reduce(t)
      ```
  - id: two
    question: "What is \\\\(n\\\\) on eight ranks?"
    choices: ["8", "1", "0"]
    answer: 1
    explanation: "The world size."
"""
