"""SecretBox: values kept recoverably encrypted at rest (webhook signing secrets) under SITEAUDIT_SECRET_KEY,
sealed for a trip through the queue (verify tokens), and secrets derived from it (crawler secrets).

Fernet (AES-128-CBC with HMAC-SHA256, from `cryptography`) does the encryption and the authentication.
The setting may be a Fernet key as `generate_key()` makes one, used as it is, or any other text, from
which a key is derived with scrypt: a person may well type a passphrase there, and scrypt makes guessing
it slow. Earlier keys may be given too, so the key can be changed without losing what it protected.
"""

import base64
import binascii
import hashlib
import hmac
from typing import Final

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

# Fixed on purpose: one key per deployment, and the derivation must give the same key on every start.
_SALT: Final = b"siteaudit/secretbox/v1"
_SCRYPT_N: Final = 2**14


class SecretUnreadable(Exception):
    """A stored value does not decrypt under any configured key (wrong key, or tampered)."""


def _fernet_key(key: str) -> bytes:
    stripped = key.strip()
    if not stripped:
        raise ValueError("an empty secret key protects nothing; set SITEAUDIT_SECRET_KEY")
    try:
        if len(base64.urlsafe_b64decode(stripped.encode("ascii"))) == 32 and len(stripped) == 44:
            return stripped.encode("ascii")
    except (binascii.Error, UnicodeEncodeError, ValueError):
        pass
    derived = Scrypt(salt=_SALT, length=32, n=_SCRYPT_N, r=8, p=1).derive(stripped.encode("utf-8"))
    return base64.urlsafe_b64encode(derived)


class SecretBox:
    """Encrypts with `key`; decrypts with `key` or any of `previous` (to re-encrypt after a key change)."""

    def __init__(self, key: str, *previous: str) -> None:
        self._fernet = MultiFernet([Fernet(_fernet_key(k)) for k in (key, *previous)])
        self._key = key

    @staticmethod
    def generate_key() -> str:
        """A fresh random Fernet key, for SITEAUDIT_SECRET_KEY when none is set."""
        return Fernet.generate_key().decode("ascii")

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode("utf-8")).decode("ascii")

    def decrypt(self, token: str) -> str:
        """Raises SecretUnreadable."""
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError) as error:
            raise SecretUnreadable("stored secret does not decrypt under the configured keys") from error

    def seal(self, plaintext: str) -> str:
        return self.encrypt(plaintext)

    def unseal(self, sealed: str) -> str:
        return self.decrypt(sealed)

    def derive(self, purpose: str) -> str:
        """HMAC-SHA256 of `purpose` under the key as configured (not the Fernet key made from it)."""
        return hmac.new(self._key.encode(), purpose.encode(), hashlib.sha256).hexdigest()

    def reencrypt(self, token: str) -> str:
        """The same value under the current key. Raises SecretUnreadable."""
        try:
            return self._fernet.rotate(token.encode("ascii")).decode("ascii")
        except (InvalidToken, UnicodeError) as error:
            raise SecretUnreadable("stored secret does not decrypt under the configured keys") from error
