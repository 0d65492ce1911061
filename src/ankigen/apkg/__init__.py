"""What goes into an Anki package, one module per Anki concept: the note type and its
templates, a note's fields, a deck's description, the package file itself, AnkiWeb's limits,
and the card as Anki renders it (for the preview)."""
