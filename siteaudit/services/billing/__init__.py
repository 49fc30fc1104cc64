"""Billing (docs/rest-api.md "Billing"): the feature package (docs/architecture.md)."""
