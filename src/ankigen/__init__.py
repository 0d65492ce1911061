"""ankigen: multiple-choice quiz banks in, stable Anki packages out.

The public API is the names in `__all__` (docs/library.md); everything else in the
package is private by convention, whatever its name. Each public name is loaded on
first use (PEP 562): every `ankigen.*` import runs this module first, a build with
nothing to do among them, and that build must load nothing it does not read
(`tests/builder/test_result.py`)."""

# typing.TYPE_CHECKING without importing typing, which every `ankigen.*` import would
# pay (the replay among them, as `core.jsondata` explains): the real imports, for
# mypy and a caller's type checker only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ankigen.bank.files import NoBanks
    from ankigen.builder.pipeline import build
    from ankigen.builder.result import BuildResult, DeckReport
    from ankigen.checks.run import Linted, lint
    from ankigen.core.errors import (
        AnkigenError,
        Diagnostic,
        InvalidBanks,
        LockError,
        OutputError,
    )
    from ankigen.core.userfile import Refused
    from ankigen.core.version import __version__
    from ankigen.formats.convert import (
        Exported,
        ExportWritten,
        Imported,
        ImportWritten,
        export_bank,
        export_to,
        import_file,
        write_import,
    )
    from ankigen.formats.model import FormatError
    from ankigen.translation.po import (
        PoImport,
        PoImported,
        PoWritten,
        export_po,
        import_po_file,
    )
    from ankigen.translation.poread import PoError
    from ankigen.translation.start import Started, TranslationError, write_translation

__all__ = [
    "AnkigenError",
    "BuildResult",
    "DeckReport",
    "Diagnostic",
    "ExportWritten",
    "Exported",
    "FormatError",
    "ImportWritten",
    "Imported",
    "InvalidBanks",
    "Linted",
    "LockError",
    "NoBanks",
    "OutputError",
    "PoError",
    "PoImport",
    "PoImported",
    "PoWritten",
    "Refused",
    "Started",
    "TranslationError",
    "__version__",
    "build",
    "export_bank",
    "export_po",
    "export_to",
    "import_file",
    "import_po_file",
    "lint",
    "write_import",
    "write_translation",
]

# where each public name lives: the same as the imports above, which mypy checks, and
# `tests/test_api.py` checks the two agree
_HOMES = {
    "__version__": "ankigen.core.version",
    "AnkigenError": "ankigen.core.errors",
    "BuildResult": "ankigen.builder.result",
    "DeckReport": "ankigen.builder.result",
    "Diagnostic": "ankigen.core.errors",
    "ExportWritten": "ankigen.formats.convert",
    "Exported": "ankigen.formats.convert",
    "FormatError": "ankigen.formats.model",
    "ImportWritten": "ankigen.formats.convert",
    "Imported": "ankigen.formats.convert",
    "InvalidBanks": "ankigen.core.errors",
    "Linted": "ankigen.checks.run",
    "LockError": "ankigen.core.errors",
    "NoBanks": "ankigen.bank.files",
    "OutputError": "ankigen.core.errors",
    "PoError": "ankigen.translation.poread",
    "PoImport": "ankigen.translation.po",
    "PoImported": "ankigen.translation.po",
    "PoWritten": "ankigen.translation.po",
    "Refused": "ankigen.core.userfile",
    "Started": "ankigen.translation.start",
    "TranslationError": "ankigen.translation.start",
    "build": "ankigen.builder.pipeline",
    "export_bank": "ankigen.formats.convert",
    "export_po": "ankigen.translation.po",
    "export_to": "ankigen.formats.convert",
    "import_file": "ankigen.formats.convert",
    "import_po_file": "ankigen.translation.po",
    "lint": "ankigen.checks.run",
    "write_import": "ankigen.formats.convert",
    "write_translation": "ankigen.translation.start",
}


def _public(name: str) -> object:
    """A public name, imported from its module on first use and kept here after."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ankigen' has no attribute {name!r}")
    # __import__, not importlib: a builtin, so this module imports nothing at all
    module = __import__(home, fromlist=[name])
    value: object = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if not TYPE_CHECKING:
    # hidden from mypy: a module `__getattr__` would let any misspelt name type-check
    __getattr__ = _public
