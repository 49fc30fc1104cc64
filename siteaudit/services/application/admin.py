"""Administration (`Admin`), the first run's local owner (`LocalOwner`) and what the metrics read
(`Operations`)."""

from collections.abc import Mapping, Sequence

from siteaudit.domain.account import Membership, Team, User
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.site import Site
from siteaudit.ports.application import ArchivePolicy, IssuedKey, KeyHolder, PersonView, TeamView
from siteaudit.services import account as account_services
from siteaudit.services import archive as archive_services
from siteaudit.services import audit as audit_services
from siteaudit.services import key as key_services
from siteaudit.services import signin as signin_services
from siteaudit.services import site as site_services
from siteaudit.services.application.base import LocalPorts
from siteaudit.services.console import source as console_services


class LocalAdmin(LocalPorts):
    """`Admin`, `LocalOwner` and `Operations` over the application's ports."""

    __slots__ = ()

    def create_user(self, email: str, *, plan: str = "free") -> User:
        return self._call(account_services.create_user, email, plan=plan)

    def create_team(self, name: str, *, owner_email: str) -> Team:
        return self._call(account_services.create_team, name, owner_email=owner_email)

    def add_member(self, team_name: str, email: str) -> Membership:
        return self._call(account_services.add_member, team_name, email)

    def remove_member(self, team_name: str, email: str) -> None:
        self._call(account_services.remove_member, team_name, email)

    def set_plan(self, email: str, plan: str) -> User:
        return self._call(account_services.set_plan, email, plan)

    def grant_credits(self, email: str, tenths: int, *, idempotency_key: str) -> int:
        return self._call(account_services.grant_credits, email, tenths, key=idempotency_key)

    def list_users(self) -> Sequence[PersonView]:
        return self._call(account_services.list_users)

    def list_teams(self) -> Sequence[TeamView]:
        return self._call(account_services.list_teams)

    def whoami(self, key_or_prefix: str) -> KeyHolder:
        return self._call(key_services.key_holder, key_or_prefix)

    def set_password(self, email: str, password: str) -> User:
        return self._call(signin_services.set_password, email, password)

    def password_link(self, email: str) -> str:
        return self._call(signin_services.password_link, email)

    def list_team_sites(self, team_name: str) -> Sequence[Site]:
        return self._call(site_services.list_team_sites, team_name)

    def verify_site_by_hand(self, site_id: SiteId, reason: str) -> Site:
        return self._call(site_services.verify_site_by_hand, site_id, reason=reason)

    def archive_audits(self, policy: ArchivePolicy | None = None) -> Sequence[AuditId]:
        policy = policy or self.archiving
        if not policy.selects_anything:
            return []
        return self._call(
            archive_services.archive_audits,
            older_than_days=policy.older_than_days,
            keep_last=policy.keep_last,
        )

    def connect_search_console(self, team_name: str, refresh_token: str, *, account: str) -> None:
        console_services.connect(team_name, refresh_token, account, self.console_deps)

    def disconnect_search_console(self, team_name: str) -> bool:
        return console_services.disconnect(team_name, self.console_deps)

    def ensure_local_owner(self, *, plan: str, starting_credits: int) -> IssuedKey | None:
        return self._call(account_services.ensure_local_owner, plan=plan, starting_credits=starting_credits)

    def audits_by_status(self) -> Mapping[AuditStatus, int]:
        return self._call(audit_services.audits_by_status)
