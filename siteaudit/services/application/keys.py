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
        return key_services.create_settings_key(
            email, team_name, uow=self.uow(), clock=self.clock, secrets=self.secrets
        )

    def rotate_key(self, email: str, team_name: str) -> IssuedKey:
        return key_services.rotate_settings_key(
            email, team_name, uow=self.uow(), clock=self.clock, secrets=self.secrets
        )

    def revoke_key(self, email: str, prefix: str) -> ApiKey:
        return key_services.revoke_key(email, prefix, uow=self.uow(), clock=self.clock)

    def list_keys(self, email: str) -> Sequence[ApiKey]:
        return key_services.list_keys(email, uow=self.uow())

    def webhook_secret(self, email: str, *, rotate: bool = False) -> str:
        return webhook_services.person_webhook_secret(
            email, rotate=rotate, uow=self.uow(), secrets=self.secrets
        )
