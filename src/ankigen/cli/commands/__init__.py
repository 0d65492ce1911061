"""The commands, a module each (or two alike): `app` loads only the one that runs."""
