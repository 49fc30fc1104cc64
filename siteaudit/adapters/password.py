"""Passwords hashed with argon2id (argon2-cffi's defaults: RFC 9106's second recommended setting)."""

from typing import Final

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError


class Argon2Hasher:
    """`siteaudit.ports.signin.PasswordHasher` with argon2-cffi."""

    def __init__(self, hasher: PasswordHasher | None = None) -> None:
        self._hasher = hasher or PasswordHasher()
        # Verified against when there is nothing to verify against, so that costs the same time.
        self._decoy: Final = self._hasher.hash("a password nobody has, for timing only")

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def verify(self, stored: str | None, password: str) -> bool:
        try:
            return self._hasher.verify(stored or self._decoy, password) and stored is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
