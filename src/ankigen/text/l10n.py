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
    "show_choices",
    "grade_again",
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
        "Show choices",
        "The honest grade for this one is Again.",
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
        "বিকল্পগুলো দেখান",
        "এর সৎ মূল্যায়ন হলো “আবার” (Again)।",
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
        "Fi àwọn àṣàyàn hàn",
        "Ìdíwọ̀n òtítọ́ fún èyí ni “Lẹ́ẹ̀kan si” (Again).",
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
        "विकल्प दिखाएँ",
        "इसका ईमानदार ग्रेड “फिर से” (Again) है।",
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
        "اختیارات دکھائیں",
        "اس کا دیانت دار درجہ “دوبارہ” (Again) ہے۔",
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
        "Wone tànneef yi",
        "Noot bu dëgg bi fii mooy “Again”.",
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
        "Antwortmöglichkeiten zeigen",
        "Ehrlich bewertet ist das „Nochmal“ (Again).",
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
        "Mostrar opciones",
        "La calificación honesta aquí es «Otra vez» (Again).",
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
        "Afficher les choix",
        "La note honnête ici est « À revoir » (Again).",
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
        "أظهر الخيارات",
        "التقييم الصادق هنا هو «مجددًا» (Again).",
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
DECK_KEYS = (
    "level",
    "items",
    "language",
    "source",
    "license",
    "version",
    "retired_items",
    "retired",
)
# `retired` is the notice on a retired card; {search} is replaced by the search
# that finds such cards, which is the same in every language.
DECK_WORDS: dict[str, tuple[str, ...]] = {
    "en": (
        "Level",
        "Questions",
        "Language",
        "Source",
        "Licence",
        "Version",
        "Retired questions, not counted above",
        "Retired question: it is no longer part of this deck. To remove it, search the "
        "browser for {search}, then suspend or delete those cards.",
    ),
    "bn": (
        "স্তর",
        "প্রশ্ন",
        "ভাষা",
        "উৎস",
        "লাইসেন্স",
        "সংস্করণ",
        "অবসরপ্রাপ্ত প্রশ্ন, উপরের গণনায় নেই",
        "অবসরপ্রাপ্ত প্রশ্ন: এটি আর এই ডেকের অংশ নয়। সরাতে ব্রাউজারে {search} খুঁজুন, "
        "তারপর কার্ডগুলো সাসপেন্ড বা মুছে ফেলুন।",
    ),
    "yo": (
        "Ìpele",
        "Àwọn ìbéèrè",
        "Èdè",
        "Orísun",
        "Ìwé àṣẹ",
        "Ẹ̀dà",
        "Àwọn ìbéèrè tí a ti yọ kúrò, tí a kò kà lókè",
        "Ìbéèrè tí a ti yọ kúrò: kò sí nínú àkójọ yìí mọ́. Láti yọ ọ́, wá {search} nínú "
        "aṣàwárí káàdì, lẹ́yìn náà dá àwọn káàdì náà dúró tàbí pa wọ́n rẹ́.",
    ),
    "hi": (
        "स्तर",
        "प्रश्न",
        "भाषा",
        "स्रोत",
        "लाइसेंस",
        "संस्करण",
        "हटाए गए प्रश्न, ऊपर नहीं गिने गए",
        "हटाया गया प्रश्न: यह अब इस डेक का हिस्सा नहीं है। इसे हटाने के लिए ब्राउज़र में "
        "{search} खोजें, फिर उन कार्डों को निलंबित करें या मिटा दें।",
    ),
    "ur": (
        "سطح",
        "سوالات",
        "زبان",
        "ماخذ",
        "لائسنس",
        "ورژن",
        "ہٹائے گئے سوالات، اوپر شمار نہیں",
        "ہٹایا گیا سوال: یہ اب اس ڈیک کا حصہ نہیں۔ اسے ہٹانے کے لیے براؤزر میں {search} "
        "تلاش کریں، پھر ان کارڈز کو معطل یا حذف کریں۔",
    ),
    "wo": (
        "Niveau",
        "Laaj yi",
        "Làkk",
        "Fi mu jóge",
        "Lisaans",
        "Sumb",
        "Laaj yi ñu bàyyi, ñu waccu leen ci limu kaw",
        "Laaj bu ñu bàyyi: bokkatul ci deck bii. Ngir far ko, seetal {search} ci browser bi, "
        "te nga taxawal walla far kart yooyu.",
    ),
    "de": (
        "Niveau",
        "Fragen",
        "Sprache",
        "Quelle",
        "Lizenz",
        "Version",
        "Ausgemusterte Fragen, oben nicht gezählt",
        "Ausgemusterte Frage: Sie gehört nicht mehr zu diesem Stapel. Zum Entfernen im "
        "Browser nach {search} suchen und diese Karten aussetzen oder löschen.",
    ),
    "es": (
        "Nivel",
        "Preguntas",
        "Idioma",
        "Fuente",
        "Licencia",
        "Versión",
        "Preguntas retiradas, no contadas arriba",
        "Pregunta retirada: ya no forma parte de este mazo. Para quitarla, busca {search} "
        "en el explorador y suspende o elimina esas tarjetas.",
    ),
    "fr": (
        "Niveau",
        "Questions",
        "Langue",
        "Source",
        "Licence",
        "Version",
        "Questions retirées, non comptées ci-dessus",
        "Question retirée : elle ne fait plus partie de ce paquet. Pour la supprimer, "
        "cherchez {search} dans le navigateur, puis suspendez ou supprimez ces cartes.",
    ),
    "ar": (
        "المستوى",
        "الأسئلة",
        "اللغة",
        "المصدر",
        "الترخيص",
        "الإصدار",
        "أسئلة مسحوبة، غير محسوبة أعلاه",
        "سؤال مسحوب: لم يعد جزءًا من هذه الرزمة. لإزالته، ابحث في المتصفح عن {search} "
        "ثم علّق تلك البطاقات أو احذفها.",
    ),
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


# The two choices of a true/false question imported from GIFT or Moodle XML.
TRUE_FALSE: dict[str, tuple[str, str]] = {
    "en": ("True", "False"),
    "bn": ("সত্য", "মিথ্যা"),
    "yo": ("Òótọ́", "Irọ́"),
    "hi": ("सत्य", "असत्य"),
    "ur": ("درست", "غلط"),
    "wo": ("Dëgg", "Fen"),
    "de": ("Wahr", "Falsch"),
    "es": ("Verdadero", "Falso"),
    "fr": ("Vrai", "Faux"),
    "ar": ("صحيح", "خطأ"),
}


def true_false(language: str) -> tuple[str, str]:
    """ "True" and "False" in the language, English for languages not listed."""
    return TRUE_FALSE.get(language.split("-")[0].lower(), TRUE_FALSE[FALLBACK])
