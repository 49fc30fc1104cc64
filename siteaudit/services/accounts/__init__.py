"""A key holder's account (docs/rest-api.md "Credits"): the feature package (docs/architecture.md). People,
teams, plans and credits themselves are administration, in `services/account.py`."""
