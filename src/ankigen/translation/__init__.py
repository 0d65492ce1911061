"""Translation: starting or updating a language from its reference, gettext PO files out
to translation platforms and back, and the coverage of every topic in every language."""
