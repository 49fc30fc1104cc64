"""In-memory adapters: real, thread-safe implementations of the ports, for tests and embedders."""

from siteaudit.adapters.memory.store import MemoryStore, MemoryUnitOfWork

__all__ = ["MemoryStore", "MemoryUnitOfWork"]
