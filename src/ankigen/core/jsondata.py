"""JSON read from files and replies that ankigen did not necessarily write."""

from __future__ import annotations

import json

# typing.TYPE_CHECKING without importing typing: this module is on the replay's path
# (`builder.replay`), where typing would be a third of the time after Python's start-up
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def parse_json(data: str | bytes) -> Any:
    """`json.loads`, where input nested too deep for Python's parser is a ValueError like
    any other malformed JSON (json raises RecursionError for it)."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
