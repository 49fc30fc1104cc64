"""Registered sites (docs/rest-api.md "Registered sites"): the feature package (docs/architecture.md)."""
