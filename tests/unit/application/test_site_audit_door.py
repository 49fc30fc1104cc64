"""A registered site end to end through the application: prove ownership with the file proof served by a
local site, then audit it; the crawler secret goes out only once the site is verified."""

import hashlib
import hmac

from pytest_httpserver import HTTPServer

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.audit import AuditTrigger
from siteaudit.domain.identity import VERIFY_HEADER
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.site import VerifyMethod
from siteaudit.services.audits.usecases import GetAudit
from siteaudit.services.sites.usecases import CrawlSite, DeleteSite, RegisterSite, VerifySite
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL
from tests.unit.application.test_application_doors import PAGE, fetched, owner


def test_a_site_proved_by_its_file_is_audited_with_the_crawler_secret(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    httpserver.no_handler_status_code = 404
    key = SecretBox.generate_key()
    app = bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL, secret_key=key),
        queue=MemoryTaskQueue(),
    )
    application = app.application
    caller = owner(app)
    site = application.handle(RegisterSite(httpserver.url_for("/"), max_rps=5), caller)

    unverified = application.handle(CrawlSite(site_id=site.id, max_pages=5), caller)
    assert unverified.max_rps == 3.0  # capped while unverified
    application.run_crawl_slice(AuditId(unverified.crawl_id))
    assert {r.headers.get(VERIFY_HEADER) for r in fetched(httpserver, "/")} == {None}

    httpserver.expect_request(site.verify.path).respond_with_data(site.verify_token + "\n")
    proved = application.handle(VerifySite(site.id, VerifyMethod.FILE), caller)
    assert proved.verified and [c.result.value for c in proved.checked] == ["matched"]

    httpserver.clear_log()
    started = application.handle(
        CrawlSite(site_id=site.id, max_pages=5, max_rps=9, trigger=AuditTrigger.CI), caller
    )
    audit = application.audit_progress(AuditId(started.crawl_id), caller).detail.audit
    assert (audit.max_rps, audit.trigger, audit.webhook_url) == (
        5.0,
        AuditTrigger.CI,
        None,
    )
    application.run_crawl_slice(audit.id)
    with app.uow() as uow:
        secret_ref = uow.sites.get(SiteId(site.id), team=caller.team_id).crawler_secret_ref
    expected = hmac.new(key.encode(), f"crawler:{secret_ref}".encode(), hashlib.sha256)
    assert {r.headers.get(VERIFY_HEADER) for r in fetched(httpserver, "/")} == {expected.hexdigest()}


def test_an_audit_of_a_deleted_site_runs_to_its_end_without_the_secret(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    httpserver.no_handler_status_code = 404
    app = bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL),
        queue=MemoryTaskQueue(),
    )
    application = app.application
    caller = owner(app)
    site = application.handle(RegisterSite(httpserver.url_for("/")), caller)
    httpserver.expect_request(site.verify.path).respond_with_data(site.verify_token)
    application.handle(VerifySite(site.id, None), caller)
    started = application.handle(CrawlSite(site_id=site.id, max_pages=5), caller)
    application.handle(DeleteSite(site.id), caller)
    httpserver.clear_log()
    application.run_crawl_slice(AuditId(started.crawl_id))
    application.finalize_audit(AuditId(started.crawl_id))
    audit = application.handle(GetAudit(AuditId(started.crawl_id)), caller)
    assert (audit.status.value, audit.site_id) == ("done", site.id)
    assert {r.headers.get(VERIFY_HEADER) for r in fetched(httpserver, "/")} == {None}
