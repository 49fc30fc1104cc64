"""Audits (docs/rest-api.md "Endpoints"): an audit's status, cancel, report and the report's parts; the feature package (docs/architecture.md)."""
