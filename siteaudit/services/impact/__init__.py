"""Fix impact (SPEC 2.9, 4.7): the feature package (docs/architecture.md)."""
