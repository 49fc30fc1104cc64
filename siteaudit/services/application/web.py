"""The app beyond the callers' API (`WebSession`, docs/app.md): sessions and passwords, the team's members,
device approval, the billing page, the audits page and an audit's live progress."""

from collections.abc import Sequence

from siteaudit.domain.account import Caller, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.billing import Fulfilment, PlanChoice
from siteaudit.domain.device import DeviceLogin
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.signin import AppSession
from siteaudit.ports.application import (
    AppViewer,
    AuditProgress,
    AuditQuery,
    BillingStatus,
    Invitation,
    Listing,
    MemberView,
    SignedIn,
)
from siteaudit.services import audit as audit_services
from siteaudit.services import report as report_services
from siteaudit.services import signin as signin_services
from siteaudit.services import team as team_services
from siteaudit.services.application.base import LocalPorts
from siteaudit.services.billing import billing as billing_services
from siteaudit.services.device import approval as device_approval


class LocalWebSession(LocalPorts):
    """`WebSession` over the application's ports."""

    __slots__ = ()

    def sign_up_open(self) -> bool:
        return self.sign_in_terms.open_sign_up

    def sign_in(self, email: str, password: str) -> SignedIn:
        return self._call(signin_services.sign_in, email, password)

    def sign_up(self, email: str, password: str) -> SignedIn:
        return self._call(signin_services.sign_up, email, password)

    def app_viewer(self, session_token: str) -> AppViewer:
        return self._call(signin_services.viewer, session_token)

    def sign_out(self, session_token: str) -> None:
        self._call(signin_services.sign_out, session_token)

    def confirm_password(self, session_token: str, password: str) -> AppSession:
        return self._call(signin_services.confirm_password, session_token, password)

    def switch_team(self, session_token: str, team_id: TeamId) -> AppSession:
        return self._call(signin_services.switch_team, session_token, team_id)

    def request_password_reset(self, email: str) -> None:
        self._call(signin_services.request_password_reset, email)

    def reset_password(self, link_token: str, password: str) -> User:
        return self._call(signin_services.reset_password, link_token, password)

    def team_members(self, caller: Caller) -> Sequence[MemberView]:
        return self._call(team_services.team_members, caller)

    def invite_member(self, caller: Caller, email: str) -> Invitation:
        return self._call(team_services.invite_member, caller, email)

    def remove_team_member(self, caller: Caller, user_id: UserId) -> None:
        self._call(team_services.remove_team_member, caller, user_id)

    def device_login_to_decide(self, user_code: str) -> DeviceLogin:
        return self._call(device_approval.login_to_decide, user_code)

    def approve_device_login(self, user_code: str, caller: Caller) -> DeviceLogin:
        return self._call(device_approval.approve_device_login, user_code, caller.user_id, caller.team_id)

    def deny_device_login(self, user_code: str, user: UserId) -> DeviceLogin:
        return self._call(device_approval.deny_device_login, user_code)

    def billing_status(self, caller: Caller) -> BillingStatus:
        return self._call(billing_services.status, caller, provider=self.payments)

    def billing_change_plan(self, choice: PlanChoice, caller: Caller) -> BillingStatus:
        return self._call(billing_services.change_plan, choice, caller, provider=self.payments)

    def renew_test_subscription(self, paid_from: str, caller: Caller) -> Fulfilment:
        return self._call(
            billing_services.renew_local_subscription, paid_from, caller, provider=self.payments
        )

    def audit_progress(self, audit_id: AuditId, caller: Caller) -> AuditProgress:
        detail = self._call(audit_services.get_audit, audit_id, caller)
        return self._call(report_services.audit_progress, detail)

    def list_audits(self, query: AuditQuery, caller: Caller) -> Listing[Audit]:
        audits, total = self._call(audit_services.list_audits, caller, query)
        return Listing(audits, total)
