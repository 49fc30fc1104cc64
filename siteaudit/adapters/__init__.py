"""Adapters: the technology behind each port."""
