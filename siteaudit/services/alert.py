"""The monitoring alert mail: once per scheduled audit that ended worse than the site's previous audit.

The mark that an audit's mail goes out is committed before the mail is sent, so a finalisation run twice
sends one mail; a process that dies between the two loses that mail (at most once, never twice).
"""

import logging

from siteaudit.domain.alert import site_alert
from siteaudit.domain.audit import AuditStatus, AuditTrigger
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import AuditId, TeamId
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.mailer import Mailer, MailUndeliverable
from siteaudit.ports.repository import UnitOfWork

log = logging.getLogger(__name__)


def mail_site_alert(
    audit_id: AuditId, *, uow: UnitOfWork, crawl: CrawlStore, mailer: Mailer, clock: Clock, public_url: str
) -> bool:
    """Mail the team owner when this done scheduled audit of a site with `alert_email` has a lower
    health score or new errors than the previous audit; whether a mail went out now."""
    with uow:
        audit = uow.audits.get_any(audit_id)
        if audit.trigger != AuditTrigger.SCHEDULE or audit.status != AuditStatus.DONE:
            return False
        if audit.site_id is None:
            return False
        try:
            site = uow.sites.get(audit.site_id, team=TeamId(audit.team_id))
        except NotFound:
            return False  # deleted since: nobody asked for its alerts any more
        owner = uow.users.get(uow.teams.get(site.team_id).owner_id)
    report = crawl.report(audit_id)
    if report is None:
        return False
    alert = site_alert(audit, report, site_url=site.url, alert_email=site.alert_email, public_url=public_url)
    if alert is None:
        return False
    with uow:
        if not uow.sites.claim_alert(audit_id, site_id=site.id, at=clock.now()):
            return False
        uow.commit()
    try:
        mailer.send(to=owner.email, subject=alert.subject, text=alert.text)
    except MailUndeliverable as exc:
        log.warning(
            "alert mail for audit %s to the owner of site %s not delivered: %s", audit_id, site.id, exc
        )
        return False
    log.info("alert mail for audit %s of site %s sent", audit_id, site.id)
    return True
