"""Passwords hashed with argon2id (argon2-cffi's defaults: RFC 9106's second recommended setting)."""

import threading

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError


class Argon2Hasher:
    """`siteaudit.ports.signin.PasswordHasher` with argon2-cffi."""

    def __init__(self, hasher: PasswordHasher | None = None) -> None:
        self._hasher = hasher or PasswordHasher()
        self._decoy = ""
        self._lock = threading.Lock()

    def _decoy_hash(self) -> str:
        # Verified against when there is nothing to verify against, so that costs the same time. Made on
        # first need: building the application (every CLI command, every test) pays nothing for it.
        with self._lock:
            if not self._decoy:
                self._decoy = self._hasher.hash("a password nobody has, for timing only")
            return self._decoy

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def verify(self, stored: str | None, password: str) -> bool:
        try:
            return self._hasher.verify(stored or self._decoy_hash(), password) and stored is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
