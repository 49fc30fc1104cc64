"""Fix tasks and rechecks (docs/rest-api.md "Fix tasks and rechecks"): the feature package (docs/architecture.md)."""
