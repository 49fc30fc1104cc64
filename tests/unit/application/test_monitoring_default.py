"""Monitoring runs by default: a site registered with defaults by the local owner (default credits) is
audited, and its scheduled audits then start, reserving the last audit's pages plus headroom and
settling to the pages fetched. `siteaudit scheduler --once` in a process of its own:
tests/integration/workers/test_scheduler_once.py."""

from pytest_httpserver import HTTPServer

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditStatus, AuditTrigger
from siteaudit.domain.credit import credits
from siteaudit.domain.ids import AuditId
from siteaudit.domain.site import DEFAULT_MAX_PAGES, SCHEDULED_HEADROOM_MIN, Monitoring, VerifyMethod
from siteaudit.services.audits.answers import Audit as AuditAnswer
from siteaudit.services.audits.usecases import GetAudit
from siteaudit.services.sites.answers import UpdatedSite
from siteaudit.services.sites.usecases import CrawlSite, GetSite, RegisterSite, UpdateSite, VerifySite
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL
from tests.unit.application.test_alert_mail import serve_site

PAGES = 3  # the home page and its two clock pages (`serve_site`)


def local_owner(app: App) -> Caller:
    """The owner `siteaudit serve` creates on an empty database, with the default plan and credits."""
    defaults = Settings()
    issued = app.application.ensure_local_owner(
        plan=defaults.local_owner_plan, starting_credits=defaults.starting_credits
    )
    assert issued is not None
    return app.application.authenticate(issued.raw)


def run_to_end(app: App, audit_id: AuditId, caller: Caller) -> AuditAnswer:
    for _ in range(10):
        if app.application.run_crawl_slice(audit_id).next != "slice":
            break
    app.application.finalize_audit(audit_id)
    audit = app.application.handle(GetAudit(audit_id), caller)
    assert audit.status is AuditStatus.DONE
    return audit


def audited_daily_site(app: App, caller: Caller, httpserver: HTTPServer) -> UpdatedSite:
    """A site registered with defaults, verified, audited once by hand, then monitored daily."""
    application = app.application
    serve_site(httpserver, broken=False)
    site = application.handle(RegisterSite(httpserver.url_for("/")), caller)
    assert site.max_pages == DEFAULT_MAX_PAGES
    httpserver.expect_request(site.verify.path).respond_with_data(site.verify_token)
    application.handle(VerifySite(site.id, VerifyMethod.FILE), caller)
    first = application.handle(CrawlSite(site_id=site.id), caller)
    assert run_to_end(app, AuditId(first.crawl_id), caller).pages_crawled == PAGES
    return application.handle(UpdateSite(site.id, monitoring=Monitoring.DAILY), caller)


def balance(app: App, caller: Caller) -> int:
    with app.uow() as uow:
        return uow.credits.balance(caller.user_id)


def test_a_site_registered_with_defaults_is_monitored_after_its_first_audit(httpserver: HTTPServer) -> None:
    clock = FixedClock()
    app = bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL),
        clock=clock,
        queue=MemoryTaskQueue(),
    )
    owner = local_owner(app)
    site = audited_daily_site(app, owner, httpserver)
    assert balance(app, owner) == credits(Settings().starting_credits - PAGES)
    assert site.next_crawl_at is not None

    dispatched = app.application.dispatch_due_site_audits(site.next_crawl_at)
    assert dispatched.skipped == {} and len(dispatched.started) == 1
    assert app.application.handle(GetSite(site.id), owner).last_skip_reason is None

    # Reserved: the last audit's pages plus headroom, the page cap of the scheduled audit.
    scheduled = app.application.handle(GetAudit(dispatched.started[0]), owner)
    needed = PAGES + SCHEDULED_HEADROOM_MIN
    assert (scheduled.trigger, scheduled.max_pages) == (AuditTrigger.SCHEDULE, needed)
    assert scheduled.credits_reserved == needed  # whole credits, as /v1 shows them
    assert balance(app, owner) == credits(Settings().starting_credits - PAGES - needed)
    # Settled to the pages fetched: the rest of the reservation comes back, nothing twice.
    assert run_to_end(app, AuditId(scheduled.crawl_id), owner).pages_crawled == PAGES
    assert balance(app, owner) == credits(Settings().starting_credits - 2 * PAGES)
    app.application.finalize_audit(AuditId(scheduled.crawl_id))
    assert balance(app, owner) == credits(Settings().starting_credits - 2 * PAGES)
