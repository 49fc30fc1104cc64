"""Time and randomness: the two things the domain never makes for itself."""

from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class Secrets(Protocol):
    def token(self, length: int, alphabet: str) -> str:
        """`length` characters drawn uniformly and unpredictably from `alphabet` (a CSPRNG)."""
        ...

    def token_hex(self, nbytes: int) -> str:
        """`nbytes` unpredictable bytes as lowercase hex."""
        ...
