"""Monitoring end to end on PostgreSQL: a daily site, the clock moved on a day, two scheduler passes (as
two schedulers would) start one audit; it runs, ends with a new error, and one alert mail reaches a real
SMTP server (aiosmtpd on 127.0.0.1)."""

from collections.abc import Callable

import pytest
from pytest_httpserver import HTTPServer

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.audit import AuditStatus, AuditTrigger
from siteaudit.domain.site import Monitoring, VerifyMethod
from siteaudit.entrypoints.scheduler import scheduler_pass
from siteaudit.ports.application import AuditQuery
from siteaudit.services.audits.usecases import GetAudit
from siteaudit.services.sites.usecases import GetSite, RegisterSite, UpdateSite, VerifySite
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL
from tests.unit.application.test_alert_mail import Inbox, free_port, serve_site
from tests.unit.application.test_application_doors import owner


@pytest.mark.postgres
def test_a_daily_site_is_dispatched_once_audited_and_mailed_once(
    new_postgres_database: Callable[..., str], httpserver: HTTPServer
) -> None:
    from aiosmtpd.controller import Controller

    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        clock = FixedClock()
        app = bootstrap(
            Settings(
                database_url=new_postgres_database(migrated=True),
                secret_key=SecretBox.generate_key(),
                allow_networks=("127.0.0.0/8",),
                smtp_url=f"smtp://127.0.0.1:{controller.port}?starttls=false",
                public_url="https://audit.example",
                **UNPACED_LOCAL,  # the site on 127.0.0.1 (tests/local_sites.py)
            ),
            clock=clock,
            queue=MemoryTaskQueue(),
        )
        application = app.application
        caller = owner(app)
        serve_site(httpserver, broken=False)
        site = application.handle(RegisterSite(httpserver.url_for("/"), max_pages=10), caller)
        httpserver.expect_request(site.verify.path).respond_with_data(site.verify_token)
        application.handle(VerifySite(site.id, VerifyMethod.FILE), caller)
        application.handle(UpdateSite(site.id, monitoring=Monitoring.DAILY), caller)
        schedulers = [scheduler_pass(application, clock.now) for _ in range(2)]

        def day() -> list[int]:
            before = {a.id for a in application.list_audits(AuditQuery(site_id=site.id), caller).items}
            clock.advance(days=1)
            for run in schedulers:
                run()
            started = [
                a.id
                for a in application.list_audits(AuditQuery(site_id=site.id), caller).items
                if a.id not in before
            ]
            for audit_id in started:
                for _ in range(10):
                    if application.run_crawl_slice(audit_id).next != "slice":
                        break
                application.finalize_audit(audit_id)
                audit = application.handle(GetAudit(audit_id), caller)
                assert (audit.status, audit.trigger) == (AuditStatus.DONE, AuditTrigger.SCHEDULE.value)
            return [int(a) for a in started]

        assert len(day()) == 1 and inbox.mails == []
        serve_site(httpserver, broken=True)
        httpserver.expect_request(site.verify.path).respond_with_data(site.verify_token)
        worse = day()
        assert len(worse) == 1 and len(inbox.mails) == 1
        assert f"/app/audits/{worse[0]}" in (inbox.mails[0].original_content or b"").decode()
        detail = application.handle(GetSite(site.id), caller)
        assert detail.last_dispatched_at == clock.now() and detail.last_skip_reason is None
    finally:
        controller.stop()
