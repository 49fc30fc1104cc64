"""Ownership and monitoring of registered sites as a state machine, through the application interface on
the memory adapters: register, publish or withdraw the file proof, verify, set monitoring, change plan,
audit, delete, and days passing with the daily proof re-check (a proof gone sets `lost_at` and the site
stays verified through the grace period; gone past it, the site is lost; back within it, `lost_at` is
cleared; a lost site is verified again by a matching verification).

Invariants after every step: the team's sites are exactly the model's, each verified exactly when the
model says (a verification matched and no proof stayed gone past the grace period), with the model's
`lost_at`; monitoring is set only on verified sites, or on sites that lost their proof, paused with
`last_skip_reason` `site_not_verified`; on a plan without monitoring a set monitoring says
`plan_limit_monitoring`; a site audit runs at verified speed (over 3 requests a second, over 500 pages)
only on a verified site; a deleted site answers not_found.
"""

from datetime import datetime, timedelta

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    rule,
)

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.account import DEFAULT_PLANS
from siteaudit.domain.credit import credits
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.site import Monitoring
from siteaudit.ports.site import ProofPage
from siteaudit.services.audits.usecases import CancelAudit, GetAudit
from siteaudit.services.sites.usecases import (
    CrawlSite,
    DeleteSite,
    GetSite,
    GetSiteVerification,
    ListSites,
    RegisterSite,
    UpdateSite,
    VerifySite,
)
from siteaudit.settings import Settings
from tests.unit.rest.conftest import ScriptedProofs

HOSTS = ("a.retro-clock.example", "b.retro-clock.example", "c.retro-clock.example")
OWNER = "owner@retro-clock.example"


class SiteOwnershipMachine(RuleBasedStateMachine):
    sites = Bundle("sites")

    @initialize()
    def team(self) -> None:
        self.proofs = ScriptedProofs()
        self.clock = FixedClock()
        self.grace = timedelta(days=Settings().proof_grace_days)
        self.app = bootstrap(
            Settings(database_url="memory://"),
            clock=self.clock,
            queue=MemoryTaskQueue(),
            resolver=StaticResolver({host: ["93.184.215.14"] for host in HOSTS}),
            proof_reader=self.proofs,
        )
        application = self.app.application
        application.create_user(OWNER, plan="growth")
        application.create_team("Retro Clock", owner_email=OWNER)
        application.grant_credits(OWNER, credits(1_000_000), idempotency_key="start")
        self.caller = application.authenticate(application.create_key(OWNER, "Retro Clock").raw)
        self.plan = "growth"
        self.model: dict[int, dict[str, object]] = {}  # id -> host, verified, monitoring
        self.deleted: list[int] = []

    def _code(self, error: DomainError) -> str:
        return error.code.value

    @rule(target=sites, host=st.sampled_from(HOSTS))
    def register(self, host: str) -> object:
        expected: str | None = None
        if len(self.model) >= DEFAULT_PLANS[self.plan].max_sites:
            expected = ErrorCode.PLAN_LIMIT_SITES.value
        elif any(s["host"] == host for s in self.model.values()):
            expected = ErrorCode.SITE_EXISTS.value
        try:
            site = self.app.application.handle(RegisterSite(f"https://{host}/"), self.caller)
        except DomainError as error:
            assert self._code(error) == expected
            return multiple()
        assert expected is None
        self.model[site.id] = {
            "host": host,
            "verified": False,
            "monitoring": "off",
            "token": site.verify_token,
            "lost_at": None,
        }
        return site.id

    @rule(site_id=sites, present=st.booleans())
    def publish_the_file(self, site_id: int, present: bool) -> None:
        if site_id not in self.model:
            return
        site = self.model[site_id]
        url = f"https://{site['host']}/.well-known/siteaudit-site-verification.txt"
        if present:
            self.proofs.pages[url] = ProofPage(url, status=200, text=str(site["token"]))
        else:
            self.proofs.pages.pop(url, None)

    @rule(site_id=sites, publish_first=st.booleans())
    def verify(self, site_id: int, publish_first: bool) -> None:
        if site_id not in self.model:
            return
        if publish_first:
            self.publish_the_file(site_id, True)
        site = self.model[site_id]
        page = self.proofs.pages.get(f"https://{site['host']}/.well-known/siteaudit-site-verification.txt")
        # A file left by a deleted site of the same host carries that site's token, not this one's.
        published = page is not None and page.text == site["token"]
        try:
            proved = self.app.application.handle(VerifySite(SiteId(site_id), None), self.caller)
        except DomainError as error:
            assert not published and self._code(error) == "verification_failed"
            return
        assert published and proved.verified
        event(
            "a lost site was verified again"
            if site["verified"] is False and site.get("was_lost")
            else "a site was verified"
        )
        site["verified"] = True
        site["lost_at"] = None

    @rule(site_id=sites, mode=st.sampled_from(list(Monitoring)))
    def set_monitoring(self, site_id: int, mode: Monitoring) -> None:
        if site_id not in self.model:
            return
        site = self.model[site_id]
        expected: str | None = None
        if mode is not Monitoring.OFF and not DEFAULT_PLANS[self.plan].monitoring:
            expected = ErrorCode.PLAN_LIMIT_MONITORING.value
        elif mode is not Monitoring.OFF and not site["verified"]:
            expected = ErrorCode.SITE_NOT_VERIFIED.value
        try:
            changed = self.app.application.handle(UpdateSite(SiteId(site_id), monitoring=mode), self.caller)
        except DomainError as error:
            assert self._code(error) == expected
            return
        assert expected is None and changed.monitoring is mode
        event(f"monitoring set {mode.value}")
        assert (changed.next_crawl_at is None) == (mode is Monitoring.OFF)
        site["monitoring"] = mode.value

    def _published(self, site: dict[str, object]) -> bool:
        page = self.proofs.pages.get(f"https://{site['host']}/.well-known/siteaudit-site-verification.txt")
        return page is not None and page.text == site["token"]

    @rule(days=st.integers(min_value=1, max_value=9))
    def days_pass(self, days: int) -> None:
        """The clock moves on and the daily re-check reads every verified site's proof again."""
        now = self.clock.advance(days=days)
        rechecked = self.app.application.recheck_site_proofs(now)
        expected = [0, 0, 0]  # confirmed, missing, lost
        for site in self.model.values():
            if not site["verified"]:
                continue
            if self._published(site):
                expected[0] += 1
                if site["lost_at"] is not None:
                    event("a proof came back within the grace period")
                site["lost_at"] = None
                continue
            expected[1] += 1
            lost_at = site["lost_at"]
            if isinstance(lost_at, datetime) and now - lost_at >= self.grace:
                expected[2] += 1
                event("a site was lost past the grace period")
                site["verified"] = False
                site["was_lost"] = True
            else:
                if lost_at is None:
                    event("a proof went missing")
                else:
                    event("a proof stayed missing within the grace period")
                site["lost_at"] = lost_at or now
        assert (rechecked.confirmed, rechecked.missing, rechecked.lost) == tuple(expected)

    @rule(site_id=sites, days=st.integers(min_value=1, max_value=14), back=st.booleans())
    def the_proof_goes(self, site_id: int, days: int, back: bool) -> None:
        """The owner withdraws the proof; re-checks follow a day later and `days` days after that (within
        the grace period below 7, past it from 7 on), with the proof published again in between when
        `back`."""
        if site_id not in self.model:
            return
        self.publish_the_file(site_id, False)
        self.days_pass(1)
        if back:
            self.publish_the_file(site_id, True)
        self.days_pass(days)

    @rule(plan=st.sampled_from(["free", "growth"]))
    def change_plan(self, plan: str) -> None:
        self.app.application.set_plan(OWNER, plan)
        self.plan = plan

    @rule(
        site_id=sites,
        max_rps=st.sampled_from([None, 1.0, 5.0, 10.0]),
        max_pages=st.sampled_from([None, 10, 501]),
    )
    def audit(self, site_id: int, max_rps: float | None, max_pages: int | None) -> None:
        if site_id not in self.model:
            return
        verified = bool(self.model[site_id]["verified"])
        asked = CrawlSite(SiteId(site_id), max_rps=max_rps, max_pages=max_pages)
        try:
            started = self.app.application.handle(asked, self.caller)
        except DomainError as error:
            assert max_pages == 501 and (
                (not verified and self._code(error) == "site_not_verified")
                or (self.plan == "free" and self._code(error) == "plan_limit_max_pages")
            )
            return
        audit = self.app.application.handle(GetAudit(AuditId(started.crawl_id)), self.caller)
        assert verified or (started.max_rps <= 3 and audit.max_pages <= 500)
        self.app.application.handle(CancelAudit(AuditId(started.crawl_id)), self.caller)

    @rule(site_id=consumes(sites))
    def delete(self, site_id: int) -> None:
        if site_id not in self.model:
            return
        self.app.application.handle(DeleteSite(SiteId(site_id)), self.caller)
        del self.model[site_id]
        self.deleted.append(site_id)

    @invariant()
    def the_team_sees_the_model(self) -> None:
        if not hasattr(self, "app"):
            return
        listed = {s.id: s for s in self.app.application.handle(ListSites(), self.caller).data}
        assert set(listed) == set(self.model)
        allows = DEFAULT_PLANS[self.plan].monitoring
        for site_id, site in listed.items():
            assert site.verified == self.model[site_id]["verified"]
            ownership = self.app.application.handle(GetSiteVerification(SiteId(site_id)), self.caller)
            assert ownership.lost_at == self.model[site_id]["lost_at"]
            assert site.monitoring.value == self.model[site_id]["monitoring"]
            if site.monitoring is not Monitoring.OFF:
                if not allows:
                    assert site.last_skip_reason == "plan_limit_monitoring"
                elif not site.verified:
                    assert site.last_skip_reason == "site_not_verified"
        for gone in self.deleted:
            try:
                self.app.application.handle(GetSite(SiteId(gone)), self.caller)
            except DomainError as error:
                assert self._code(error) == "not_found"
            else:
                raise AssertionError(f"deleted site {gone} still answers")


TestSiteOwnership = SiteOwnershipMachine.TestCase
TestSiteOwnership.settings = settings(max_examples=300, stateful_step_count=40)
