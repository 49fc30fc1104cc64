"""Fix impact (docs/rest-api.md "Fix impact"): the feature package (docs/architecture.md)."""
