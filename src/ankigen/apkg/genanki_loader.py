"""genanki, imported without the modules it loads and ankigen never uses.

This is speed machinery, kept here so that the package writer reads as ordinary code.
It edits `sys.modules` while genanki imports, and only then:

- genanki takes `cached_property` from the package of that name, which imports
  asyncio for coroutine properties (genanki has none). Measured: a tenth of a build
  that changes one deck of 1,000 items. While genanki is imported, that name is the
  standard library's `functools.cached_property`, the same descriptor without asyncio.
- genanki's own writing of a package file takes zipfile and tempfile (with shutil,
  random, bz2 and lzma), which ankigen never asks of it (`package.zip_bytes` writes
  ours). Measured: 5 ms of an edit's worker, between its check and its deck's plan.
  While genanki is imported, those names are modules that import the real one when a
  name is first looked up in them (`_ImportedOnUse`).

Whatever imports those modules later gets the real ones. `tests/builder/test_build.py` runs
genanki's own package writer after this import, and checks what was loaded.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types


def load_genanki() -> types.ModuleType:
    """The genanki module, imported light the first time (see the module's docstring)."""
    if "genanki" not in sys.modules and "cached_property" not in sys.modules:
        stand_in = types.ModuleType("cached_property")
        stand_in.cached_property = functools.cached_property  # type: ignore[attr-defined]
        stand_ins = {"cached_property": stand_in}
        for name in ("zipfile", "tempfile"):
            if name not in sys.modules:
                stand_ins[name] = _ImportedOnUse(name)
        sys.modules.update(stand_ins)
        try:
            import genanki
        finally:
            for name, module in stand_ins.items():
                if sys.modules.get(name) is module:
                    del sys.modules[name]
    import genanki  # noqa: F401  (already imported by another way, or now)

    return sys.modules["genanki"]


class _ImportedOnUse(types.ModuleType):
    """Stands for a module that is imported when a name is first looked up in it."""

    def __getattr__(self, name: str) -> object:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]  # looked up while standing in: the real one now
        return getattr(importlib.import_module(self.__name__), name)
