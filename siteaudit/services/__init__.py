"""Use cases: the only way entrypoints change state. Plain functions over ports."""
