"""A person's Settings keys and webhook secret, by email (`PersonKeys`: the admin CLI and the app)."""

from collections.abc import Sequence

from siteaudit.domain.apikey import ApiKey
from siteaudit.ports.application import IssuedKey
from siteaudit.services import key as key_services
from siteaudit.services import webhook as webhook_services
from siteaudit.services.application.base import LocalPorts


class LocalPersonKeys(LocalPorts):
    """`PersonKeys` over the application's ports."""

    __slots__ = ()

    def create_key(self, email: str, team_name: str) -> IssuedKey:
        return self._call(key_services.create_settings_key, email, team_name)

    def rotate_key(self, email: str, team_name: str) -> IssuedKey:
        return self._call(key_services.rotate_settings_key, email, team_name)

    def revoke_key(self, email: str, prefix: str) -> ApiKey:
        return self._call(key_services.revoke_key, email, prefix)

    def list_keys(self, email: str) -> Sequence[ApiKey]:
        return self._call(key_services.list_keys, email)

    def webhook_secret(self, email: str, *, rotate: bool = False) -> str:
        return self._call(webhook_services.person_webhook_secret, email, rotate=rotate)
