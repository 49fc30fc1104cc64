"""Registered sites, their fix tasks and rechecks: every query scoped by team."""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from attrs import frozen

from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TaskKey, TeamId
from siteaudit.domain.recheck import Recheck
from siteaudit.domain.site import Site
from siteaudit.domain.task import FixTask


class SiteRepository(Protocol):
    def add(self, site: Site) -> Site:
        """Stage a new site; an id of 0 gets a fresh one. Raises SiteExists when the team has its origin."""
        ...

    def get(self, site_id: SiteId, *, team: TeamId) -> Site:
        """The team's site. Raises NotFound when it does not exist or belongs to another team."""
        ...

    def list(self, *, team: TeamId) -> Sequence[Site]:
        """The team's sites, oldest first."""
        ...

    def get_any(self, site_id: SiteId) -> Site:
        """A site of any team (support and background work). Raises NotFound."""
        ...

    def count(self, *, team: TeamId) -> int: ...

    def save(self, site: Site) -> None:
        """Stage an update. Raises ConcurrentUpdate if the stored version moved since it was loaded."""
        ...

    def delete(self, site_id: SiteId, *, team: TeamId) -> None:
        """Stage the removal of the team's site. Raises NotFound."""
        ...

    def verified_for_origin(self, *, team: TeamId, origin: str) -> Site | None:
        """The team's verified site for this origin, if any."""
        ...

    def due(self, now: datetime, *, limit: int) -> Sequence[Site]:
        """Sites of any team whose monitoring audit is due (`next_crawl_at` <= now), earliest first,
        claimed for this unit of work: rows another unit of work has claimed are passed over (PostgreSQL
        `FOR UPDATE SKIP LOCKED`), so schedulers that run at once never take the same site."""
        ...

    def claim_alert(self, audit_id: AuditId, *, site_id: SiteId, at: datetime) -> bool:
        """Stage the mark that the alert mail of this scheduled audit goes out; False when it already
        has (one mail per audit, however often the audit is finalised)."""
        ...

    def verified(self, *, limit: int, checked_before: datetime) -> Sequence[Site]:
        """Verified sites of any team last checked at or before `checked_before` (or never), oldest check
        first, claimed as `due` claims them."""
        ...


class FixTaskRepository(Protocol):
    def of_site(self, site_id: SiteId) -> Sequence[FixTask]:
        """The site's tasks (any status), in key order."""
        ...

    def get(self, site_id: SiteId, key: TaskKey) -> FixTask:
        """Raises NotFound."""
        ...

    def save(self, task: FixTask) -> None:
        """Stage a new or changed task. Raises ConcurrentUpdate if a stored task's version moved."""
        ...

    def delete(self, site_id: SiteId, key: TaskKey) -> None:
        """Remove a task (merged into another that carries its URLs); an unknown key is no error."""
        ...


class RecheckRepository(Protocol):
    def add(self, recheck: Recheck) -> Recheck:
        """Stage a new recheck; an id of 0 gets a fresh one."""
        ...

    def get(self, recheck_id: RecheckId, *, team: TeamId) -> Recheck:
        """Raises NotFound for an unknown recheck or another team's."""
        ...

    def get_any(self, recheck_id: RecheckId) -> Recheck: ...

    def unfinished(self, *, limit: int) -> Sequence[Recheck]:
        """Rechecks of every team that have not ended (queued or running), oldest first: the reaper's."""
        ...

    def save(self, recheck: Recheck) -> None:
        """Stage an update. Raises ConcurrentUpdate if the stored version moved since it was loaded."""
        ...


# --- ownership proofs --------------------------------------------------------------------------------


@frozen
class ProofPage:
    """A page or file read for an ownership proof: `error` set means nothing usable was read (network,
    a redirect off the site, ...); otherwise the final answer's status, text and `<head>` meta tags."""

    url: str
    status: int | None = None
    text: str = ""
    metas: tuple[tuple[str, str], ...] = ()  # (name, content) of the <meta> tags in <head>
    error: str | None = None
    headers: tuple[tuple[str, str], ...] = ()  # the final answer's headers, names lower-case


class TxtLookupFailed(Exception):
    """The DNS lookup itself failed (timeout, server failure, no server answered): not "no record"."""


class ProofReader(Protocol):
    """Where the ownership proofs are read from: the site over HTTP (through the SSRF guard) and DNS."""

    def read(self, url: str, *, origin: str) -> ProofPage:
        """GET `url`, following redirects only while they stay on `origin`'s host (scheme may change).
        Never raises for network outcomes: they come back as `error`."""
        ...

    def txt_records(self, name: str) -> tuple[str, ...]:
        """The TXT values at `name`, each record's strings joined; () when the name or record does not
        exist. Raises TxtLookupFailed when no answer could be had."""
        ...
