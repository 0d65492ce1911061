"""The card's own words, in every language that ships and a few more.

The card chooses among them with CSS on its `lang` attribute, so they show
without JavaScript and no author text is ever placed in a script.
"""

from __future__ import annotations

import html

KEYS = (
    "select_all",
    "verdict_correct",
    "verdict_incorrect",
    "verdict_partial",
    "verdict_none",
    "answer",
    "explanation",
    "your_answer",
    "correct_answer",
    "missed",
    "version",
)

STRINGS: dict[str, tuple[str, ...]] = {
    "en": (
        "Select all that apply",
        "Correct",
        "Incorrect",
        "Partly correct",
        "No answer selected",
        "Answer",
        "Explanation",
        "Your answer",
        "Correct answer",
        "Missed",
        "Version",
    ),
    "bn": (
        "প্রযোজ্য সবগুলো বেছে নিন",
        "সঠিক",
        "ভুল",
        "আংশিক সঠিক",
        "কোনো উত্তর বাছাই করা হয়নি",
        "উত্তর",
        "ব্যাখ্যা",
        "আপনার উত্তর",
        "সঠিক উত্তর",
        "বাদ পড়েছে",
        "সংস্করণ",
    ),
    "yo": (
        "Yan gbogbo èyí tó bá tọ́",
        "Ó tọ́",
        "Kò tọ́",
        "Ó tọ́ díẹ̀",
        "O kò yan ìdáhùn kankan",
        "Ìdáhùn",
        "Àlàyé",
        "Ìdáhùn rẹ",
        "Ìdáhùn tó tọ́",
        "O kò yàn án",
        "Ẹ̀dà",
    ),
    "hi": (
        "सभी सही विकल्प चुनें",
        "सही",
        "गलत",
        "आंशिक रूप से सही",
        "कोई उत्तर नहीं चुना गया",
        "उत्तर",
        "स्पष्टीकरण",
        "आपका उत्तर",
        "सही उत्तर",
        "छूट गया",
        "संस्करण",
    ),
    "ur": (
        "تمام درست جوابات منتخب کریں",
        "درست",
        "غلط",
        "جزوی طور پر درست",
        "کوئی جواب منتخب نہیں کیا گیا",
        "جواب",
        "وضاحت",
        "آپ کا جواب",
        "درست جواب",
        "رہ گیا",
        "ورژن",
    ),
    "wo": (
        "Tànnal yépp yi dëgg",
        "Dëgg la",
        "Du dëgg",
        "Am na lu dëgg ci",
        "Tànnoo benn tontu",
        "Tontu",
        "Leeral",
        "Sa tontu",
        "Tontu bu dëgg",
        "Fàtte nga ko",
        "Sumb",
    ),
    "de": (
        "Wähle alle zutreffenden Antworten",
        "Richtig",
        "Falsch",
        "Teilweise richtig",
        "Keine Antwort gewählt",
        "Antwort",
        "Erklärung",
        "Deine Antwort",
        "Richtige Antwort",
        "Übersehen",
        "Version",
    ),
    "es": (
        "Selecciona todas las correctas",
        "Correcto",
        "Incorrecto",
        "Parcialmente correcto",
        "No se eligió ninguna respuesta",
        "Respuesta",
        "Explicación",
        "Tu respuesta",
        "Respuesta correcta",
        "Omitida",
        "Versión",
    ),
    "fr": (
        "Sélectionnez toutes les bonnes réponses",
        "Correct",
        "Incorrect",
        "Partiellement correct",
        "Aucune réponse choisie",
        "Réponse",
        "Explication",
        "Votre réponse",
        "Bonne réponse",
        "Oubliée",
        "Version",
    ),
    "ar": (
        "اختر كل الإجابات الصحيحة",
        "صحيح",
        "خطأ",
        "صحيح جزئيًا",
        "لم تُختر أي إجابة",
        "الإجابة",
        "الشرح",
        "إجابتك",
        "الإجابة الصحيحة",
        "فاتتك",
        "الإصدار",
    ),
}
FALLBACK = "en"


def phrase(key: str) -> str:
    """One UI phrase in every language; the card's CSS shows the one for its language."""
    index = KEYS.index(key)
    spans = "".join(
        f'<span lang="{code}">{html.escape(words[index])}</span>' for code, words in STRINGS.items()
    )
    return f'<span class="ag-t" data-k="{key}">{spans}</span>'


def phrases_block() -> str:
    """Every phrase, hidden, for the script to copy from."""
    return '<div class="ag-l10n" hidden>' + "".join(phrase(k) for k in KEYS) + "</div>"


def css() -> str:
    """Show the phrase in the card's language, English where it has none."""
    others = [code for code in STRINGS if code != FALLBACK]
    known = ",\n".join(f'.ag-card[lang|="{code}"] .ag-t > [lang="{FALLBACK}"]' for code in others)
    rules = [
        ".ag-t > [lang] { display: none; }",
        f'.ag-t > [lang="{FALLBACK}"] {{ display: inline; }}',
        f"{known} {{ display: none; }}",
    ]
    rules.extend(
        f'.ag-card[lang|="{code}"] .ag-t > [lang="{code}"] {{ display: inline; }}'
        for code in others
    )
    return "\n".join(rules) + "\n"


# Headings of the generated deck description (Python-side, so plain strings).
DECK_KEYS = ("level", "items", "language", "source", "license", "version")
DECK_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("Level", "Questions", "Language", "Source", "Licence", "Version"),
    "bn": ("স্তর", "প্রশ্ন", "ভাষা", "উৎস", "লাইসেন্স", "সংস্করণ"),
    "yo": ("Ìpele", "Àwọn ìbéèrè", "Èdè", "Orísun", "Ìwé àṣẹ", "Ẹ̀dà"),
    "hi": ("स्तर", "प्रश्न", "भाषा", "स्रोत", "लाइसेंस", "संस्करण"),
    "ur": ("سطح", "سوالات", "زبان", "ماخذ", "لائسنس", "ورژن"),
    "wo": ("Niveau", "Laaj yi", "Làkk", "Fi mu jóge", "Lisaans", "Sumb"),
    "de": ("Niveau", "Fragen", "Sprache", "Quelle", "Lizenz", "Version"),
    "es": ("Nivel", "Preguntas", "Idioma", "Fuente", "Licencia", "Versión"),
    "fr": ("Niveau", "Questions", "Langue", "Source", "Licence", "Version"),
    "ar": ("المستوى", "الأسئلة", "اللغة", "المصدر", "الترخيص", "الإصدار"),
}
LANGUAGE_NAMES = {
    "en": "English",
    "bn": "বাংলা",
    "yo": "Yorùbá",
    "hi": "हिन्दी",
    "ur": "اردو",
    "wo": "Wolof",
    "de": "Deutsch",
    "es": "Español",
    "fr": "Français",
    "ar": "العربية",
}


def deck_word(language: str, key: str) -> str:
    words = DECK_WORDS.get(language.split("-")[0].lower(), DECK_WORDS[FALLBACK])
    return words[DECK_KEYS.index(key)]


def language_name(language: str) -> str:
    return LANGUAGE_NAMES.get(language.split("-")[0].lower(), language)
