"""Fix tasks and rechecks (SPEC 2.7, 2.8, 4.5, 4.6): the feature package (docs/architecture.md)."""
