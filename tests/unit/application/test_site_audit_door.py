"""A registered site end to end through the application: prove ownership with the file proof served by a
local site, then audit it; the crawler secret goes out only once the site is verified."""

import hashlib
import hmac

from pytest_httpserver import HTTPServer

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.audit import AuditRequest, AuditTrigger
from siteaudit.domain.identity import VERIFY_HEADER
from siteaudit.domain.site import VerifyMethod
from siteaudit.ports.application import SiteRegistration
from siteaudit.services.audits.usecases import GetAudit
from siteaudit.settings import Settings
from tests.unit.application.test_application_doors import PAGE, fetched, owner


def test_a_site_proved_by_its_file_is_audited_with_the_crawler_secret(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    httpserver.no_handler_status_code = 404
    key = SecretBox.generate_key()
    app = bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), secret_key=key),
        queue=MemoryTaskQueue(),
    )
    application = app.application
    caller = owner(app)
    site = application.register_site(SiteRegistration(httpserver.url_for("/"), max_rps=5), caller)

    unverified = application.start_site_audit(AuditRequest(site_id=site.id, max_pages=5), caller)
    assert unverified.audit.max_rps == 3.0  # capped while unverified
    application.run_crawl_slice(unverified.audit.id)
    assert {r.headers.get(VERIFY_HEADER) for r in fetched(httpserver, "/")} == {None}

    httpserver.expect_request(site.proofs.file.path).respond_with_data(site.verify_token + "\n")
    proved = application.verify_site(site.id, VerifyMethod.FILE, caller)
    assert proved.site.verified and [c.outcome.value for c in proved.checked] == ["matched"]

    httpserver.clear_log()
    started = application.start_site_audit(
        AuditRequest(site_id=site.id, max_pages=5, max_rps=9, trigger=AuditTrigger.CI), caller
    )
    assert (started.audit.max_rps, started.audit.trigger, started.audit.webhook_url) == (
        5.0,
        AuditTrigger.CI,
        None,
    )
    application.run_crawl_slice(started.audit.id)
    expected = hmac.new(key.encode(), f"crawler:{site.crawler_secret_ref}".encode(), hashlib.sha256)
    assert {r.headers.get(VERIFY_HEADER) for r in fetched(httpserver, "/")} == {expected.hexdigest()}


def test_an_audit_of_a_deleted_site_runs_to_its_end_without_the_secret(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    httpserver.no_handler_status_code = 404
    app = bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",)), queue=MemoryTaskQueue()
    )
    application = app.application
    caller = owner(app)
    site = application.register_site(SiteRegistration(httpserver.url_for("/")), caller)
    httpserver.expect_request(site.proofs.file.path).respond_with_data(site.verify_token)
    application.verify_site(site.id, None, caller)
    started = application.start_site_audit(AuditRequest(site_id=site.id, max_pages=5), caller)
    application.delete_site(site.id, caller)
    httpserver.clear_log()
    application.run_crawl_slice(started.audit.id)
    application.finalize_audit(started.audit.id)
    audit = application.handle(GetAudit(started.audit.id), caller)
    assert (audit.status.value, audit.site_id) == ("done", site.id)
    assert {r.headers.get(VERIFY_HEADER) for r in fetched(httpserver, "/")} == {None}
