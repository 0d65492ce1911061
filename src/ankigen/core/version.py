"""ankigen's version, for the modules that record it (caches, PO headers, `--version`).

Here rather than in `ankigen/__init__.py`, which names the public API: a module that
imported the package's root for its version would, in import-linter's eyes, import
every layer the API reaches."""

__version__ = "0.1.0"
