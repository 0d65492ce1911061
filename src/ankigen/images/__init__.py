"""Images an item names: verified, cleaned, downscaled, content-named and cached, with the
settings that decide their bytes."""
