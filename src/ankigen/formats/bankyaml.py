"""An imported Source written as a bank (YAML), text kept exactly.

What the source does not say is left for the author: a missing answer is
`answer: ~  # TODO`, a missing explanation `explanation: ""  # TODO`, and
`ankigen build` refuses both at their lines until they are filled in.
"""

from __future__ import annotations

from ankigen.formats.model import Choice, Question, Source

CHOICE_WHY = True
"""Write per-choice feedback as each choice's `why`, which banks hold since issue 14.

When False, the feedback is folded into the explanation, one line per choice,
so nothing the source says is lost: for banks that must stay readable by older
ankigen versions.
"""


def _needs_escape(code: int) -> bool:
    """Characters YAML would not keep as written: controls, line separators, BOM, surrogates."""
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or code in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF)
        or 0xD800 <= code <= 0xDFFF
    )


def yaml_string(text: str) -> str:
    """A YAML double-quoted scalar holding exactly `text`."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif _needs_escape(code):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def folded_explanation(question: Question) -> str | None:
    """The explanation, with each choice's feedback appended while banks have no `why`."""
    whys = [c for c in question.choices if c.why]
    if CHOICE_WHY or not whys:
        return question.explanation
    lines = [f"{choice.text} — {choice.why}" for choice in whys]
    if question.explanation:
        return question.explanation + "\n\n" + "\n".join(lines)
    return "\n".join(lines)


def _choice(choice: Choice) -> list[str]:
    if CHOICE_WHY and choice.why:
        return [
            f"      - text: {yaml_string(choice.text)}",
            f"        why: {yaml_string(choice.why)}",
        ]
    return [f"      - {yaml_string(choice.text)}"]


def bank_yaml(source: Source, ids: list[str], topic: str, language: str) -> str:
    """The source as a bank file."""
    q = yaml_string
    out = [f"topic: {topic}", f"language: {language}", f"title: {q(source.title)}"]
    if source.description:
        out.append(f"description: {q(source.description)}")
    if source.level:
        out.append(f"level: {q(source.level)}")
    out.append("items:")
    for item_id, question in zip(ids, source.questions, strict=True):
        out.append(f"  - id: {item_id}")
        out.append(f"    question: {q(question.question)}")
        out.append("    choices:")
        for choice in question.choices:
            out.extend(_choice(choice))
        picks = question.answer
        if question.answered and picks:
            value = str(picks[0]) if len(picks) == 1 else "[" + ", ".join(map(str, picks)) + "]"
            out.append(f"    answer: {value}")
        else:
            out.append(
                f"    answer: ~  # TODO: the number of the correct choice "
                f"(1-{len(question.choices)})"
            )
        explanation = folded_explanation(question)
        if explanation:
            out.append(f"    explanation: {q(explanation)}")
        else:
            out.append('    explanation: ""  # TODO: why the answer is right')
        if question.tags:
            out.append("    tags: [" + ", ".join(q(t) for t in question.tags) + "]")
        if question.shuffle is not None:
            out.append(f"    shuffle: {'true' if question.shuffle else 'false'}")
        for key in ("image", "image_alt", "explanation_image", "explanation_image_alt"):
            value = getattr(question, key)
            if value:
                out.append(f"    {key}: {q(value)}")
    return "\n".join(out) + "\n"
