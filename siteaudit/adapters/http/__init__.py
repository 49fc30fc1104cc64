"""Outbound HTTP over httpx: the SSRF guard, resolvers and the fetcher."""
