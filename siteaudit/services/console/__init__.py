"""The search console (docs/rest-api.md "Search console"): the feature package (docs/architecture.md)."""
