"""Rendering pages in a browser: the Playwright pool (docs/rendering.md)."""
