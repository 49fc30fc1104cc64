"""IndexNow (docs/rest-api.md "IndexNow"): the feature package (docs/architecture.md)."""
