"""ankigen: multiple-choice quiz banks in, stable Anki packages out."""

__version__ = "0.1.0"
