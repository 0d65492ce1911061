"""How a build processes images: its settings, and the key that names their results.

Apart from `images.process` (and Pillow): a build with nothing changed needs the key only.
"""

from __future__ import annotations

from collections import namedtuple

DEFAULT_MAX_SIDE = 1600
# bump when the processing changes, so cached results are redone
PROCESSING_VERSION = "1"


TYPE_CHECKING = False  # records on a build's quickest path are named tuples (see `errors`)
if TYPE_CHECKING:
    from typing import NamedTuple

    class _Settings(NamedTuple):
        max_side: int = DEFAULT_MAX_SIDE
        """The longest side of an image in the packages, in pixels."""
else:
    _Settings = namedtuple("_Settings", "max_side", defaults=(DEFAULT_MAX_SIDE,))


class Settings(_Settings):
    """How images are processed for the packages."""

    __slots__ = ()

    @property
    def key(self) -> str:
        return f"v{PROCESSING_VERSION}:max{self.max_side}"
