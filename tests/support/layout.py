"""The back's layout, measured in a page: the same script in Chromium and in the Anki
desktop, so that both are held to one rule (the result first)."""

PARTS = ("verdict", "pick", "correct", "explanation")

# Where each part of the back ends (its bottom, or the explanation's first line), in
# CSS pixels from the top of the page, and the height of the first screen.
MEASURE = """() => {
    const bottom = s => { const e = document.querySelector(s); return e ? e.getBoundingClientRect().bottom : null; };
    const expl = document.querySelector('.ag-explanation-text');
    const range = document.createRange();
    range.selectNodeContents(expl);
    const first = range.getClientRects()[0];
    return {
        verdict: bottom('.ag-back .ag-verdict'),
        pick: bottom('.ag-back .ag-choices li[data-picked="true"]'),
        correct: Math.max(...[...document.querySelectorAll('.ag-back .ag-choices li[data-correct="true"]')]
            .map(e => e.getBoundingClientRect().bottom)),
        explanation: first ? first.bottom : null,
        question: bottom('.ag-back .ag-question'),
        screen: innerHeight,
    };
}"""
