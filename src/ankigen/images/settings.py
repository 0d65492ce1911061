"""How a build processes images: its settings, and the key that names their results.

Apart from `images.process` (and Pillow): a build with nothing changed needs the key only.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_SIDE = 1600
# bump when the processing changes, so cached results are redone
PROCESSING_VERSION = "1"


@dataclass(frozen=True)
class Settings:
    """How images are processed for the packages."""

    max_side: int = DEFAULT_MAX_SIDE
    """The longest side of an image in the packages, in pixels."""

    @property
    def key(self) -> str:
        return f"v{PROCESSING_VERSION}:max{self.max_side}"
