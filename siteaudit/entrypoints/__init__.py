"""Launchers: the CLI, the WSGI app factory and the worker. Wiring and argument parsing only."""
