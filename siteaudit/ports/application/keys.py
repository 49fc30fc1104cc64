"""A person's keys and webhook secret, by email (`PersonKeys`, in `Admin` and `WebSession`), and a key as
created (`IssuedKey`, which the device login and the local owner return too)."""

from collections.abc import Sequence
from typing import Protocol

from attrs import frozen

from siteaudit.domain.apikey import ApiKey


@frozen
class IssuedKey:
    """A key as created: `raw` is shown once and never stored."""

    key: ApiKey
    raw: str


class PersonKeys(Protocol):
    """A person's Settings keys and webhook secret, by their email: the admin CLI and the app's key pages."""

    def create_key(self, email: str, team_name: str) -> IssuedKey:
        """The person's Settings key for the team. Raises SettingsKeyExists when one is active."""
        ...

    def rotate_key(self, email: str, team_name: str) -> IssuedKey:
        """Revoke the person's Settings key for the team at once and issue its successor."""
        ...

    def list_keys(self, email: str) -> Sequence[ApiKey]: ...

    def revoke_key(self, email: str, prefix: str) -> ApiKey:
        """Raises NotFound for a prefix that is not one of the person's active keys."""
        ...

    def webhook_secret(self, email: str, *, rotate: bool = False) -> str:
        """The person's webhook signing secret, replaced first when `rotate` (effective at once)."""
        ...
