"""Staging access of verified sites (docs/security.md "Staging access")."""
