"""The preview: a page per deck with every card as Anki shows it (`pages`), its own
scripts and styles (`site/`), and the MathJax Anki ships (`mathjax/`)."""
