"""Archiving old audits: their page, link and issue rows are deleted, their report stays readable.

Which audits (`archival_selection`): ended audits only, grouped by site (registered-site audits) or by
team and origin (plain-URL audits). `older_than_days` selects audits that finished at least that many days
ago; `keep_last` selects all but the N most recently finished of each group. When both are set an audit is
archived only when both select it (keep the last N, and anything younger than D days): archiving deletes
data, so two settings never delete more than either alone. With neither set nothing is archived.

Order of the steps for one audit (`archive_audit`), chosen so that a crash at any point is harmless and
the next run finishes the work:

1. The audit's issue identities are kept beside its report (`CrawlStore.save_archived_identities`, see
   `domain.diff.ArchivedIdentities`), so that the next audit of the site can still be diffed exactly. Done
   again after a crash: the same value.
2. `archived_at` is set and committed. From here the issue and page lists answer 410 `crawl_archived`.
3. The crawl store deletes the rows (one transaction in the SQL store).

Setting `archived_at` before deleting means the lists never serve an audit with its rows half gone or
silently empty; a crash between 2 and 3 leaves rows that nobody reads, and the next run, which selects the
same audit again (selection only grows: the cut-off moves forward and groups only get newer audits),
sees `archived_at` set with rows still stored and deletes them.

The diff of a later audit against an archived one must not change because the detail was
archived: a user comparing this month with last month expects the same `new`, `fixed` and `new_samples`
whether or not last month's rows are still stored. Hence step 1 (about 4.5 bytes a distinct issue: a
1,000-page audit with 3,000 issues keeps about 13 kB). Audits archived before identities were kept are
diffed by per-check page counts instead (`finalize.py`).
"""

from collections.abc import Iterable
from datetime import datetime, timedelta

from siteaudit.domain.audit import Audit
from siteaudit.domain.diff import ArchivedIdentities
from siteaudit.domain.error import ConcurrentUpdate, Conflict
from siteaudit.domain.ids import AuditId, TeamId
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.repository import UnitOfWork

# --- which audits --------------------------------------------------------------------------------------


def archive_group(audit: Audit) -> tuple[TeamId, str]:
    """Audits of one site, or plain-URL audits of one origin in one team, share a group."""
    if audit.site_id is not None:
        return audit.team_id, f"site:{audit.site_id}"
    return audit.team_id, f"origin:{audit.origin}"


def archival_selection(
    audits: Iterable[Audit], *, now: datetime, older_than_days: int | None, keep_last: int | None
) -> list[AuditId]:
    """The ended audits the settings select (archived ones included: see the module documentation)."""
    if older_than_days is not None and older_than_days < 0:
        raise ValueError(f"older_than_days must be 0 or more, not {older_than_days}")
    if keep_last is not None and keep_last < 0:
        raise ValueError(f"keep_last must be 0 or more, not {keep_last}")
    if older_than_days is None and keep_last is None:
        return []
    groups: dict[tuple[TeamId, str], list[Audit]] = {}
    for audit in audits:
        if audit.status.ended and audit.finished_at is not None:
            groups.setdefault(archive_group(audit), []).append(audit)
    cutoff = None if older_than_days is None else now - timedelta(days=older_than_days)
    chosen: list[AuditId] = []
    for members in groups.values():
        members.sort(key=lambda a: (a.finished_at, a.id), reverse=True)
        for rank, audit in enumerate(members):
            assert audit.finished_at is not None
            if keep_last is not None and rank < keep_last:
                continue
            if cutoff is not None and audit.finished_at > cutoff:
                continue
            chosen.append(audit.id)
    return sorted(chosen)


def ended_audits(uow: UnitOfWork) -> list[Audit]:
    """Every ended audit of every team, and of no team."""
    with uow:
        return list(uow.audits.ended())


# --- archiving -----------------------------------------------------------------------------------------


def _has_rows(crawl: CrawlStore, audit_id: AuditId) -> bool:
    # URL ids are dense from 1 and every page, link, issue and frontier row refers to an interned URL.
    return bool(crawl.urls(audit_id, (1,))) or crawl.checkpoint(audit_id) is not None


def _keep_identities(crawl: CrawlStore, audit_id: AuditId) -> None:
    if crawl.report(audit_id) is None or crawl.archived_identities(audit_id) is not None:
        return
    identities = ArchivedIdentities.from_issues(
        (issue.check_code, issue.severity, issue.url) for _, issue in crawl.stream_issues(audit_id)
    )
    crawl.save_archived_identities(audit_id, identities)


def archive_audit(audit_id: AuditId, *, uow: UnitOfWork, crawl: CrawlStore, clock: Clock) -> bool:
    """Archive one ended audit, or finish an interrupted archive. Returns whether rows were deleted.

    Raises Conflict for an audit that has not ended, NotFound for an unknown one, ConcurrentUpdate when
    the audit changed meanwhile (nothing deleted then).
    """
    with uow:
        audit = uow.audits.get_any(audit_id)
    if not audit.status.ended:
        raise Conflict(f"audit {audit_id} has not ended; only ended audits are archived")
    if audit.archived_at is None:
        _keep_identities(crawl, audit_id)
        with uow:
            audit = uow.audits.get_any(audit_id).archive(now=clock.now())
            uow.audits.save(audit)
            uow.commit()
    elif not _has_rows(crawl, audit_id):
        return False
    crawl.archive(audit_id)
    return True


def archive_audits(
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
    clock: Clock,
    older_than_days: int | None,
    keep_last: int | None,
) -> list[AuditId]:
    """Archive what the settings select; returns the audits whose rows this run deleted, by id.

    An audit that changes while it is being archived is left for the next run.
    """
    selected = archival_selection(
        ended_audits(uow), now=clock.now(), older_than_days=older_than_days, keep_last=keep_last
    )
    archived = []
    for audit_id in selected:
        try:
            if archive_audit(audit_id, uow=uow, crawl=crawl, clock=clock):
                archived.append(audit_id)
        except ConcurrentUpdate:
            continue
    return archived
