"""Quiz formats: each module reads (and maybe writes) one format, all through one item
model (`model`); `registry` names them, and `bankyaml` is the one bank writer."""
