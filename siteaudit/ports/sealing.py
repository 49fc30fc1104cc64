"""Sealing: values only this deployment can open again, and secrets derived from its key."""

from typing import Protocol


class Sealing(Protocol):
    def seal(self, plaintext: str) -> str:
        """An opaque token of `plaintext`, encrypted and authenticated under the deployment's key."""
        ...

    def unseal(self, sealed: str) -> str:
        """The plaintext of a token `seal` made under this key (or an earlier one still configured).
        Raises an error of the adapter's own when the token does not open (wrong key, or tampered)."""
        ...

    def derive(self, purpose: str) -> str:
        """A secret for `purpose` (lowercase hex), the same in every process and on every start that
        shares the deployment's key, and unguessable without it. Nothing derived is stored."""
        ...
