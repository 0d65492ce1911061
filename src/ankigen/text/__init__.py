"""Author text: the inline HTML a bank may hold, code and formulas, language tags and
scripts, language identification, and every localized word."""
