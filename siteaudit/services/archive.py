"""Archiving old audits: their page, link and issue rows are deleted, their report stays readable.

Which audits (`archival_selection`): ended audits only, grouped by site (registered-site audits) or by
team and origin (plain-URL audits). `older_than_days` selects audits that finished at least that many days
ago; `keep_last` selects all but the N most recently finished of each group. When both are set an audit is
archived only when both select it (keep the last N, and anything younger than D days): archiving deletes
data, so two settings never delete more than either alone. With neither set nothing is archived.

Order of the steps for one audit (`archive_audit`), chosen so that a crash at any point is harmless and
the next run finishes the work:

1. The report gains the audit's issue identities (`stats.archived_identities`, see `ArchivedIdentities`),
   so that the next audit of the site can still be diffed exactly. Done again after a crash: the same value.
2. `archived_at` is set and committed. From here the issue and page lists answer 410 `crawl_archived`.
3. The crawl store deletes the rows (one transaction in the SQL store).

Setting `archived_at` before deleting means the lists never serve an audit with its rows half gone or
silently empty; a crash between 2 and 3 leaves rows that nobody reads, and the next run, which selects the
same audit again (selection only grows: the cut-off moves forward and groups only get newer audits),
sees `archived_at` set with rows still stored and deletes them.

The diff (SPEC 2.5) of a later audit against an archived one must not change because the detail was
archived: a user comparing this month with last month expects the same `new`, `fixed` and `new_samples`
whether or not last month's rows are still stored. Hence step 1. The identities are 64-bit BLAKE2b digests
of (check code, URL), cut to just enough bits that a false match is about one in a million per issue
(`ceil(log2(n)) + 20` bits for n identities), sorted, zlib-compressed and base64-encoded: about 4.5 bytes a
distinct issue (a 1,000-page audit with 3,000 issues adds about 13 kB to its report). Audits archived before
their report carried identities are diffed by per-check page counts instead (`finalize.py`).
"""

import base64
import hashlib
import math
import zlib
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any, Final, Self

from attrs import frozen

from siteaudit.domain.audit import Audit
from siteaudit.domain.error import ConcurrentUpdate, Conflict
from siteaudit.domain.ids import AuditId, TeamId
from siteaudit.domain.issue import Severity
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.repository import UnitOfWork

IDENTITIES_KEY: Final = "archived_identities"  # in the report's `stats`
_FORMAT: Final = "blake2b-sorted-zlib-v1"
_FALSE_MATCH_BITS: Final = 20  # a stray match about once in 2**20 lookups


def identity_digest(check_code: str, url: str) -> int:
    """64 bits of BLAKE2b over an issue identity: stable across processes, unlike `diff.identity_key`."""
    digest = hashlib.blake2b(check_code.encode() + b"\x00" + url.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@frozen
class ArchivedIdentities:
    """The issue identities of an audit, as truncated digests: what a diff needs once the rows are gone."""

    bits: int
    keys: frozenset[int]
    error_keys: frozenset[int]

    @staticmethod
    def bits_for(count: int) -> int:
        return min(64, max(1, math.ceil(math.log2(max(count, 1)))) + _FALSE_MATCH_BITS)

    def key(self, check_code: str, url: str) -> int:
        """The identity's key in this set's space (the digest cut to `bits`)."""
        return identity_digest(check_code, url) >> (64 - self.bits)

    @classmethod
    def from_issues(cls, issues: Iterable[tuple[str, Severity, str]]) -> Self:
        """From `(check_code, severity, url)` rows; an identity seen with severity error is an error."""
        digests: dict[int, bool] = {}
        for check_code, severity, url in issues:
            digest = identity_digest(check_code, url)
            digests[digest] = digests.get(digest, False) or severity is Severity.ERROR
        bits = cls.bits_for(len(digests))
        shift = 64 - bits
        return cls(
            bits=bits,
            keys=frozenset(d >> shift for d in digests),
            error_keys=frozenset(d >> shift for d, error in digests.items() if error),
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "bits": self.bits,
            "count": len(self.keys),
            "keys": _pack(self.keys, self.bits),
            "error_keys": _pack(self.error_keys, self.bits),
        }

    @classmethod
    def from_json(cls, value: Any) -> Self | None:
        """The identities stored in a report's stats; None when absent or in a format this code cannot read."""
        if not isinstance(value, Mapping) or value.get("format") != _FORMAT:
            return None
        bits = int(value["bits"])
        return cls(
            bits=bits,
            keys=frozenset(_unpack(value["keys"], bits)),
            error_keys=frozenset(_unpack(value["error_keys"], bits)),
        )


def _pack(keys: Iterable[int], bits: int) -> str:
    width = (bits + 7) // 8
    raw = b"".join(key.to_bytes(width, "big") for key in sorted(keys))
    return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


def _unpack(packed: str, bits: int) -> Iterator[int]:
    width = (bits + 7) // 8
    raw = zlib.decompress(base64.b64decode(packed))
    from_bytes = int.from_bytes
    return (from_bytes(raw[i : i + width], "big") for i in range(0, len(raw), width))


def stored_identities(report: Mapping[str, Any] | None) -> ArchivedIdentities | None:
    """The identities an archived audit's report carries, if any."""
    stats = report.get("stats") if report is not None else None
    return ArchivedIdentities.from_json(stats.get(IDENTITIES_KEY)) if isinstance(stats, Mapping) else None


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
    report = crawl.report(audit_id)
    if report is None or stored_identities(report) is not None:
        return
    identities = ArchivedIdentities.from_issues(
        (issue.check_code, issue.severity, issue.url) for _, issue in crawl.stream_issues(audit_id)
    )
    stats = dict(report.get("stats") or {})
    stats[IDENTITIES_KEY] = identities.as_json()
    crawl.save_report(audit_id, {**report, "stats": stats})


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
