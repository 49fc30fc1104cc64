# Over 400 lines: the audit's status machine, request rules and progress are one lifecycle.
"""Audits (crawls): the status machine, the request rules (docs/rest-api.md), progress."""

import enum
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Final, Self

from attrs import evolve, frozen

from siteaudit.domain.account import Plan
from siteaudit.domain.credit import page_cost
from siteaudit.domain.error import Conflict, DomainError, ErrorCode, ValidationFailed
from siteaudit.domain.extraction import ExtractionRule, rule_syntax
from siteaudit.domain.ids import AuditId, SiteId, TeamId, UserId
from siteaudit.domain.lifecycle import next_state
from siteaudit.domain.scope import EVERY_URL, MAX_LISTED_URLS, WHOLE_SITE, AuditScope, QueryParams, ScopeRules
from siteaudit.domain.site import (
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_RPS,
    MAX_PAGES_CEILING,
    UNVERIFIED_MAX_PAGES,
    UNVERIFIED_MAX_RPS,
    InvalidUrl,
    Notice,
    NoticeCode,
    PlanLimitMaxPages,
    SiteNotVerified,
    parse_site_url,
)

DEFAULT_CONCURRENCY: Final = 2  # connections of one audit unless it asks for more


class AuditStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINALIZING = "finalizing"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def ended(self) -> bool:
        return self in ENDED


class AuditMove(enum.StrEnum):
    START = "start"  # the first crawl slice claimed it
    STOP_CRAWLING = "stop_crawling"  # frontier empty, or a cap reached
    PUBLISH_REPORT = "publish_report"
    CANCEL = "cancel"
    FAIL = "fail"


class AuditTrigger(enum.StrEnum):
    """Where an audit came from (the audit's `trigger` field)."""

    API = "api"
    CI = "ci"
    MANUAL = "manual"
    SCHEDULE = "schedule"
    FREE = "free"
    PREVIEW = "preview"


_Q, _R, _F = AuditStatus.QUEUED, AuditStatus.RUNNING, AuditStatus.FINALIZING
AUDIT_MOVES: Final[Mapping[tuple[AuditStatus, AuditMove], AuditStatus]] = MappingProxyType(
    {
        (_Q, AuditMove.START): _R,
        (_R, AuditMove.STOP_CRAWLING): _F,
        (_F, AuditMove.PUBLISH_REPORT): AuditStatus.DONE,
        **{(s, AuditMove.CANCEL): AuditStatus.CANCELLED for s in (_Q, _R, _F)},
        **{(s, AuditMove.FAIL): AuditStatus.FAILED for s in (_Q, _R, _F)},
    }
)
ENDED: Final = frozenset({AuditStatus.DONE, AuditStatus.FAILED, AuditStatus.CANCELLED})

INTERNAL_ERROR: Final = "internal_error"
CANCELLED_REASON: Final = "cancelled"


def dispatch_failed(reason: str) -> str:
    return f"dispatch_failed: {reason}"[:500]


def reaped(reason: str) -> str:
    return f"reaped: {reason}"[:500]


def setup_failed(error_type: str) -> str:
    return f"setup_failed: {error_type}"[:500]


@frozen
class AuditEnded:
    """Event: the audit reached done, failed or cancelled; `audit` is the audit as it ended, what the
    handlers read (`services/events.py`, docs/architecture.md "Events"). Made by `Audit.ended_event`."""

    audit: "Audit"

    @property
    def audit_id(self) -> AuditId:
        return self.audit.id

    @property
    def status(self) -> AuditStatus:
        return self.audit.status

    @property
    def at(self) -> datetime:
        """When it ended."""
        assert self.audit.finished_at is not None, "Audit.ended_event makes events of ended audits only"
        return self.audit.finished_at


@frozen
class Audit:
    id: AuditId
    team_id: TeamId
    user_id: UserId  # who started it (signs the webhook)
    payer_id: UserId  # whose credits pay (docs/rest-api.md "Credits")
    url: str  # the start URL
    origin: str  # scheme://host[:port] of the start URL
    created_at: datetime
    max_pages: int
    concurrency: int = DEFAULT_CONCURRENCY
    max_rps: float = DEFAULT_MAX_RPS
    site_id: SiteId | None = None
    trigger: AuditTrigger = AuditTrigger.API
    status: AuditStatus = AuditStatus.QUEUED
    credits_reserved: int = 0  # tenths
    verify_token_set: bool = False
    webhook_url: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    archived_at: datetime | None = None
    last_progress_at: datetime | None = None  # last batch recorded, lease renewed or state move
    failure_reason: str | None = None
    pages_crawled: int = 0
    pages_not_modified: int = 0
    health_score: int | None = None
    partial: bool = False
    version: int = 0
    render: bool = False  # each HTML page is rendered in a browser after its raw fetch (docs/rendering.md)
    extract: tuple[ExtractionRule, ...] = ()  # read on each HTML page (docs/extraction.md)
    scope: AuditScope = WHOLE_SITE  # what it covers (docs/audits.md)

    def _move(self, move: AuditMove) -> AuditStatus:
        if self.status.ended and move is AuditMove.CANCEL:
            raise Conflict(f"audit {self.id} already ended ({self.status.value}); there is nothing to cancel")
        return next_state(AUDIT_MOVES, self.status, move, entity="audit")

    def start(self, *, now: datetime) -> Self:
        status = self._move(AuditMove.START)
        return evolve(self, status=status, started_at=now, last_progress_at=now, version=self.version + 1)

    def stop_crawling(self, *, partial: bool, now: datetime) -> Self:
        status = self._move(AuditMove.STOP_CRAWLING)
        return evolve(self, status=status, partial=partial, last_progress_at=now, version=self.version + 1)

    def publish_report(self, *, health_score: int | None, now: datetime) -> tuple[Self, AuditEnded]:
        return evolve(self, health_score=health_score)._end(AuditMove.PUBLISH_REPORT, now)

    def cancel(self, *, now: datetime) -> tuple[Self, AuditEnded]:
        return evolve(self, failure_reason=CANCELLED_REASON)._end(AuditMove.CANCEL, now)

    def fail(self, reason: str, *, now: datetime) -> tuple[Self, AuditEnded]:
        return evolve(self, failure_reason=reason)._end(AuditMove.FAIL, now)

    def _end(self, move: AuditMove, now: datetime) -> tuple[Self, AuditEnded]:
        ended = evolve(
            self, status=self._move(move), finished_at=now, last_progress_at=now, version=self.version + 1
        )
        return ended, ended.ended_event()

    def ended_event(self) -> AuditEnded:
        """The event of this ended audit's end (raised when it ended; again for a redelivered message)."""
        if not self.status.ended or self.finished_at is None:
            raise Conflict(f"audit {self.id} has not ended")
        return AuditEnded(self)

    def record_progress(self, *, pages_crawled: int, pages_not_modified: int, now: datetime) -> Self:
        """Counters from a crawl slice; they only grow and never pass the page cap."""
        if self.status is not AuditStatus.RUNNING:
            raise Conflict(f"audit {self.id} is {self.status.value}, not running")
        if not (
            self.pages_crawled <= pages_crawled <= self.max_pages and 0 <= pages_not_modified <= pages_crawled
        ):
            raise ValueError(
                f"progress {pages_crawled}/{pages_not_modified} is not possible for audit {self.id}"
            )
        return evolve(
            self,
            pages_crawled=pages_crawled,
            pages_not_modified=pages_not_modified,
            last_progress_at=now,
            version=self.version + 1,
        )

    def archive(self, *, now: datetime) -> Self:
        if not self.status.ended:
            raise Conflict(f"audit {self.id} has not ended; only ended audits are archived")
        if self.archived_at is not None:
            return self
        return evolve(self, archived_at=now, version=self.version + 1)

    @property
    def pages_fetched_in_full(self) -> int:
        return self.pages_crawled - self.pages_not_modified

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None:
            return None
        end = self.finished_at
        return None if end is None else max(0.0, (end - self.started_at).total_seconds())

    def duration_until(self, now: datetime) -> float | None:
        if self.started_at is None:
            return None
        return max(0.0, ((self.finished_at or now) - self.started_at).total_seconds())


# --- the request rules of POST /crawls --------------------------------------------------------------

_VERIFY_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,128}")


class MaxRpsRequiresVerifiedSite(DomainError):
    code = ErrorCode.MAX_RPS_REQUIRES_VERIFIED_SITE

    def __init__(self, max_rps: float) -> None:
        super().__init__(f"max_rps {max_rps:g} is above {UNVERIFIED_MAX_RPS:g} and needs a verified site")


class SiteUrlMismatch(DomainError):
    code = ErrorCode.SITE_URL_MISMATCH

    def __init__(self, url: str, origin: str) -> None:
        super().__init__(f"{url[:200]!r} is not on the site's origin {origin}")


def origin_of(url: str) -> str:
    """scheme://host[:port] of an http(s) URL, lower-cased, default port dropped. Raises InvalidUrl."""
    return parse_site_url(url).origin


@frozen
class AuditRequest:
    """What the caller asked for (POST /crawls or POST /sites/{id}/crawls), already syntactically valid."""

    url: str | None = None
    site_id: SiteId | None = None
    max_pages: int | None = None
    concurrency: int | None = None
    max_rps: float | None = None
    webhook_url: str | None = None
    verify_token: str | None = None
    trigger: AuditTrigger = AuditTrigger.API
    # Render each HTML page in a browser (docs/rendering.md); None: the site's saved setting, else False.
    render: bool | None = None
    # Extraction rules read on each HTML page (docs/extraction.md); their grammar is checked by the parser.
    # None: the site's saved rules (none without a site).
    extract: tuple[ExtractionRule, ...] | None = None
    # What the audit covers (docs/audits.md): a list of URLs, or what the sitemaps list; which URLs it
    # keeps and how it treats queries (None: the site's saved rules, else none).
    urls: tuple[str, ...] | None = None
    sitemap_only: bool = False
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    query_params: QueryParams | None = None
    keep_params: tuple[str, ...] | None = None


@frozen
class SiteTerms:
    """What a registered site contributes to an audit request."""

    site_id: SiteId
    url: str
    origin: str
    verified: bool
    max_pages: int
    max_rps: float
    render: bool = False
    rules: ScopeRules = EVERY_URL  # saved include, exclude and query handling (docs/audits.md)
    extract: tuple[ExtractionRule, ...] = ()  # saved extraction rules (docs/extraction.md)


@frozen
class AuditSettings:
    """The decided settings of a new audit: what is reserved and how fast it may crawl."""

    url: str
    origin: str
    max_pages: int
    concurrency: int
    max_rps: float
    site_id: SiteId | None
    verified: bool
    notices: tuple[Notice, ...] = ()  # why it runs slower than asked (`warnings` of the answer)
    render: bool = False
    extract: tuple[ExtractionRule, ...] = ()
    scope: AuditScope = WHOLE_SITE

    @property
    def estimated_credits(self) -> int:
        """Tenths reserved at the start: the page cap, one credit a page (five when rendered)."""
        return self.max_pages * page_cost(render=self.render)


def _syntax(request: AuditRequest, *, site_endpoint: bool) -> None:
    bad: dict[str, str] = {}
    if request.max_pages is not None and not 1 <= request.max_pages <= MAX_PAGES_CEILING:
        bad["max_pages"] = f"must be between 1 and {MAX_PAGES_CEILING:,}"
    if request.concurrency is not None and not 1 <= request.concurrency <= 20:
        bad["concurrency"] = "must be between 1 and 20"
    if request.max_rps is not None and not 0.5 <= request.max_rps <= 10:
        bad["max_rps"] = "must be between 0.5 and 10"
    if request.verify_token is not None:
        if not _VERIFY_TOKEN.fullmatch(request.verify_token):
            bad["verify_token"] = "must be 16-128 characters from A-Z a-z 0-9 _ -"
        elif request.site_id is not None:
            bad["verify_token"] = "cannot be combined with site_id"
    if not site_endpoint and request.url is None and request.site_id is None and request.urls is None:
        bad["url"] = "url is required unless site_id or urls is given"
    if request.webhook_url is not None:
        try:
            origin_of(request.webhook_url)
        except InvalidUrl:
            bad["webhook_url"] = "must be an http or https URL of at most 2,048 characters"
    bad.update(rule_syntax(request.extract or ()))
    if request.urls is not None:
        if request.url is not None:
            bad["url"] = "give url or urls, not both: a list audit starts at its first URL"
        if request.sitemap_only:
            bad["sitemap_only"] = "cannot be combined with urls: a list audit audits exactly its URLs"
        for name in ("include", "exclude", "query_params", "keep_params"):
            if getattr(request, name) is not None:
                bad[name] = "cannot be combined with urls: a list audit audits its URLs as listed"
    if bad:
        raise ValidationFailed(bad)


def listed_urls(urls: Sequence[str], *, origin: str | None = None) -> tuple[tuple[str, ...], dict[str, str]]:
    """A list audit's URLs, each parsed by the site URL rules, fragments dropped and duplicates removed
    (first kept), and what is wrong, by `urls[i]`: every URL must be on one origin, `origin` when given
    (a registered site's), else the first URL's."""
    bad: dict[str, str] = {}
    if not urls:
        return (), {"urls": "must list at least one URL"}
    if len(urls) > MAX_LISTED_URLS:
        return (), {"urls": f"at most {MAX_LISTED_URLS:,} URLs"}
    kept: dict[str, None] = {}
    expected = origin
    for i, raw in enumerate(urls):
        try:
            address = parse_site_url(raw.split("#", 1)[0])
        except InvalidUrl as exc:
            bad[f"urls[{i}]"] = exc.reason
            continue
        if expected is None:
            expected = address.origin
        elif address.origin != expected:
            bad[f"urls[{i}]"] = f"is not on {expected}: a list audit's URLs share one origin"
            continue
        kept[address.url] = None
    return tuple(kept), bad


def decide_scope(request: AuditRequest, site: SiteTerms | None) -> AuditScope:
    """The audit's scope (docs/audits.md): the request's inputs, each missing one the site's saved one.
    Raises ValidationFailed naming each bad input (`urls[3]`, `include[0]`, `keep_params`)."""
    if request.urls is not None:
        urls, bad = listed_urls(request.urls, origin=site.origin if site is not None else None)
        if bad:
            raise ValidationFailed(bad)
        return AuditScope(urls=urls)
    saved = site.rules if site is not None else EVERY_URL
    mode = request.query_params if request.query_params is not None else saved.query_params
    if request.keep_params is not None:
        keep = request.keep_params
    else:
        keep = saved.keep_params if mode is QueryParams.KEEP_LISTED else ()
    rules = ScopeRules(
        include=request.include if request.include is not None else saved.include,
        exclude=request.exclude if request.exclude is not None else saved.exclude,
        query_params=mode,
        keep_params=keep,
    )
    bad = rules.faults()
    if bad:
        raise ValidationFailed(bad)
    return AuditScope(sitemap_only=request.sitemap_only, rules=rules)


def decide_audit_settings(
    request: AuditRequest,
    *,
    plan: Plan,
    site: SiteTerms | None,
    origin_verified: bool,
    site_endpoint: bool = False,
) -> AuditSettings:
    """Apply the rules of POST /crawls or POST /sites/{id}/crawls to a request.

    `origin_verified`: whether the team has a verified site for the audited origin. Raises
    ValidationFailed, InvalidUrl, SiteUrlMismatch, PlanLimitMaxPages, SiteNotVerified or
    MaxRpsRequiresVerifiedSite.
    """
    _syntax(request, site_endpoint=site_endpoint)
    scope = decide_scope(request, site)
    listed = len(scope.urls)
    if site is not None:
        url = scope.urls[0] if scope.urls else request.url or site.url
        origin = origin_of(url)
        if origin != site.origin:
            raise SiteUrlMismatch(url, site.origin)
        verified = site.verified
    else:
        url = scope.urls[0] if scope.urls else (request.url or "").strip()
        origin = origin_of(url)
        verified = origin_verified

    plan_cap = plan.max_pages_per_audit
    asked_pages = request.max_pages
    if listed:
        # docs/audits.md: a list's URLs count against max_pages and the plan's cap like the pages of a crawl.
        if asked_pages is not None and listed > asked_pages:
            raise ValidationFailed(
                {"urls": f"{listed:,} distinct URLs are more than max_pages {asked_pages:,}"}
            )
        asked_pages = listed
    if asked_pages is None:
        base = site.max_pages if site is not None else DEFAULT_MAX_PAGES
        max_pages = min(base, plan_cap)
        if not verified:
            max_pages = min(max_pages, UNVERIFIED_MAX_PAGES)
    else:
        max_pages = asked_pages
        if max_pages > plan_cap:
            raise PlanLimitMaxPages(max_pages, plan_cap)
        if max_pages > UNVERIFIED_MAX_PAGES and not verified:
            raise SiteNotVerified(
                site.site_id if site else None, f"an audit of more than {UNVERIFIED_MAX_PAGES} pages"
            )

    notices: tuple[Notice, ...] = ()
    if site_endpoint and site is not None:
        # docs/rest-api.md "Registered sites": capped at the site's max_rps, and at 3 when unverified; never
        # refused, but the answer says why.
        wanted = request.max_rps if request.max_rps is not None else site.max_rps
        max_rps = min(wanted, site.max_rps, UNVERIFIED_MAX_RPS if not verified else 10.0)
        if max_rps < wanted:
            notices = (_rps_capped(wanted, max_rps, site_id=site.site_id, by_site=max_rps == site.max_rps),)
    else:
        max_rps = request.max_rps if request.max_rps is not None else DEFAULT_MAX_RPS
        if site is not None and request.max_rps is None:
            max_rps = site.max_rps if verified else min(site.max_rps, UNVERIFIED_MAX_RPS)
            if max_rps < site.max_rps:
                notices = (_rps_capped(site.max_rps, max_rps, site_id=site.site_id, by_site=False),)
        if max_rps > UNVERIFIED_MAX_RPS and not verified:
            raise MaxRpsRequiresVerifiedSite(max_rps)

    return AuditSettings(
        url=url,
        origin=origin,
        max_pages=max_pages,
        concurrency=request.concurrency or DEFAULT_CONCURRENCY,
        max_rps=float(max_rps),
        site_id=site.site_id if site is not None else None,
        verified=verified,
        notices=notices,
        render=request.render if request.render is not None else (site is not None and site.render),
        extract=request.extract
        if request.extract is not None
        else (site.extract if site is not None else ()),
        scope=scope,
    )


def _rps_capped(wanted: float, max_rps: float, *, site_id: SiteId, by_site: bool) -> Notice:
    why = (
        f"the site's saved max_rps is {max_rps:g}; raise it with PATCH /v1/sites/{site_id} first"
        if by_site
        else f"the site is not verified: its audits run at most {UNVERIFIED_MAX_RPS:g} requests a second"
    )
    return Notice(NoticeCode.MAX_RPS_CAPPED, f"max_rps {wanted:g} was capped at {max_rps:g}: {why}")
