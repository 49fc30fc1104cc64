# Over 500 lines: the site aggregate with its ownership lifecycle, proofs and monitoring schedule, one transition table.
"""Registered sites: address rules, ownership lifecycle, monitoring schedule and per-site audit limits."""

import enum
import ipaddress
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Final, Self
from urllib.parse import urlsplit

from attrs import evolve, field, frozen

from siteaudit.domain.credit import PAGE_COST, as_number
from siteaudit.domain.error import Conflict, DomainError, ErrorCode, ValidationFailed
from siteaudit.domain.extraction import ExtractionRule
from siteaudit.domain.ids import SiteId, TeamId
from siteaudit.domain.lifecycle import next_state
from siteaudit.domain.scope import EVERY_URL, QueryParams, ScopeRules

MAX_URL_LENGTH: Final = 2_048
MAX_PAGES_CEILING: Final = 500_000
DEFAULT_MAX_PAGES: Final = 10_000
DEFAULT_MAX_RPS: Final = 2.0
MIN_RPS: Final = 0.5
MAX_RPS: Final = 10.0
# Without an ownership proof an audit stays small and gentle (docs/rest-api.md "Registered sites").
UNVERIFIED_MAX_PAGES: Final = 500
UNVERIFIED_MAX_RPS: Final = 3.0

# A scheduled audit's page cap, and so its reservation: the last done audit's pages plus a quarter, at
# least 100 more (docs/rest-api.md "Monitoring and the scheduler").
SCHEDULED_HEADROOM_SHARE: Final = 4
SCHEDULED_HEADROOM_MIN: Final = 100

_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,128}")
_HOST_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_DEFAULT_PORTS: Final[Mapping[str, int]] = MappingProxyType({"http": 80, "https": 443})


# --- errors -------------------------------------------------------------------------------------------


class InvalidUrl(DomainError):
    code = ErrorCode.INVALID_URL

    def __init__(self, url: str, reason: str) -> None:
        shown = url if len(url) <= 200 else url[:200] + "..."
        super().__init__(f"{shown!r} is not an acceptable URL: {reason}")
        self.url = url
        self.reason = reason


class SiteNotVerified(DomainError):
    code = ErrorCode.SITE_NOT_VERIFIED

    def __init__(self, site_id: SiteId | None, operation: str) -> None:
        which = f"site {site_id}" if site_id is not None else "the site"
        super().__init__(f"{which} must be verified first: {operation} needs proof of ownership")
        self.site_id = site_id
        self.operation = operation


class SiteExists(DomainError):
    code = ErrorCode.SITE_EXISTS

    def __init__(self, url: str) -> None:
        super().__init__(f"a site for {url} is already registered in this team")
        self.url = url


class PlanLimitSites(DomainError):
    code = ErrorCode.PLAN_LIMIT_SITES

    def __init__(self, limit: int) -> None:
        super().__init__(f"the plan allows {limit} sites and all are in use; delete one or upgrade")
        self.limit = limit


class PlanLimitMaxPages(DomainError):
    code = ErrorCode.PLAN_LIMIT_MAX_PAGES

    def __init__(self, requested: int, limit: int) -> None:
        super().__init__(f"max_pages {requested:,} is above the plan's per-audit limit of {limit:,}")
        self.requested = requested
        self.limit = limit


class PlanLimitMonitoring(DomainError):
    code = ErrorCode.PLAN_LIMIT_MONITORING
    default_message = "scheduled monitoring needs a plan that includes it"


class VerificationFailed(DomainError):
    """No ownership method matched; the message says what to publish."""

    code = ErrorCode.VERIFICATION_FAILED

    def __init__(
        self,
        tried: Iterable["VerifyMethod"],
        proofs: "OwnershipProofs",
        checked: Iterable["ProofCheck"] = (),
    ) -> None:
        self.tried = tuple(tried)
        self.checked = tuple(checked)
        names = ", ".join(m.value for m in self.tried) or "none"
        why = "; ".join(f"{c.method.value}: {c.summary}" for c in self.checked)
        super().__init__(
            f"no ownership method matched (tried: {names}{'; ' + why if why else ''}); publish one of: "
            f"a DNS TXT record {proofs.dns.name} with value {proofs.dns.value}; "
            f"the tag {proofs.meta.tag} in the <head> of {proofs.meta.url}; "
            f"the file {proofs.file.url} containing {proofs.file.content.strip()}"
        )
        self.proofs = proofs


# --- address -----------------------------------------------------------------------------------------


@frozen
class SiteAddress:
    """A site URL after the site rules: normalised `url`, lower-case `host` and `origin` (no default port)."""

    url: str
    host: str
    origin: str


def parse_site_url(raw: str) -> SiteAddress:
    """Apply the URL rules of a site. Raises InvalidUrl (422 invalid_url).

    The public-address rule is not decided here: it needs name resolution, which is the SSRF guard's job.
    """
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidUrl(str(raw), "a URL is required")
    if len(raw) > MAX_URL_LENGTH:
        raise InvalidUrl(raw, f"longer than {MAX_URL_LENGTH:,} characters")
    text = raw.strip()
    if any(ch <= " " or ch in "\x7f\\" for ch in text):
        raise InvalidUrl(raw, "contains spaces, control characters or backslashes")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidUrl(raw, f"cannot be parsed ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise InvalidUrl(raw, "the scheme must be http or https")
    if "@" in parts.netloc:
        raise InvalidUrl(raw, "user names and passwords are not allowed in the URL")
    host = _normalise_host(raw, parts.hostname or "", bracketed="[" in parts.netloc)
    host_in_url = f"[{host}]" if ":" in host else host
    port_part = f":{port}" if port is not None and port != _DEFAULT_PORTS[scheme] else ""
    origin = f"{scheme}://{host_in_url}{port_part}"
    path = parts.path or "/"
    query = f"?{parts.query}" if parts.query else ""
    url = f"{origin}{path}{query}"
    if len(url) > MAX_URL_LENGTH:
        raise InvalidUrl(raw, f"longer than {MAX_URL_LENGTH:,} characters once normalised")
    return SiteAddress(url=url, host=host, origin=origin)


def _normalise_host(raw: str, hostname: str, *, bracketed: bool) -> str:
    if not hostname:
        raise InvalidUrl(raw, "the host is missing")
    if bracketed:
        try:
            return str(ipaddress.IPv6Address(hostname))
        except ValueError:
            raise InvalidUrl(raw, "the bracketed host is not an IPv6 address") from None
    host = hostname.rstrip(".")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise InvalidUrl(raw, "the host is not a valid internationalised domain name") from None
    host = host.lower()
    if len(host) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in host.split(".")):
        raise InvalidUrl(raw, "the host is not a valid domain name or address")
    return host


# --- ownership ---------------------------------------------------------------------------------------


class SiteStatus(enum.StrEnum):
    UNVERIFIED = "unverified"
    VERIFIED = "verified"
    LOST = "lost"


class SiteMove(enum.StrEnum):
    VERIFY = "verify"  # a method matched: first proof, periodic re-verification, or a proof after a loss
    LOSE = "lose"  # the periodic re-verification found no method matching any more


SITE_MOVES: Final[Mapping[tuple[SiteStatus, SiteMove], SiteStatus]] = MappingProxyType(
    {
        (SiteStatus.UNVERIFIED, SiteMove.VERIFY): SiteStatus.VERIFIED,
        (SiteStatus.VERIFIED, SiteMove.VERIFY): SiteStatus.VERIFIED,
        (SiteStatus.LOST, SiteMove.VERIFY): SiteStatus.VERIFIED,
        (SiteStatus.VERIFIED, SiteMove.LOSE): SiteStatus.LOST,
    }
)


class VerifyMethod(enum.StrEnum):
    """Ownership proofs. The console and CDN methods carry their vendors' names (`gsc`, `cloudflare`);
    The aliases `sc` and `cdn` are read as the same methods."""

    SC = "gsc"
    DNS = "dns"
    META = "meta"
    FILE = "file"
    CDN = "cloudflare"

    @classmethod
    def _missing_(cls, value: object) -> "VerifyMethod | None":
        return _METHOD_ALIASES.get(value) if isinstance(value, str) else None


_METHOD_ALIASES: Final[Mapping[str, VerifyMethod]] = MappingProxyType(
    {"sc": VerifyMethod.SC, "cdn": VerifyMethod.CDN}
)
# Every name a caller may give a method by, canonical first.
VERIFY_METHOD_NAMES: Final = (*(m.value for m in VerifyMethod), *_METHOD_ALIASES)


# `POST /sites/{id}/verify` without a method tries these, in this order (docs/rest-api.md "Registered sites").
VERIFY_ORDER: Final = (VerifyMethod.SC, VerifyMethod.DNS, VerifyMethod.META, VerifyMethod.FILE)

PROOF_NAME: Final = "siteaudit-site-verification"
DNS_RECORD_PREFIX: Final = "_siteaudit-challenge"
# The file proof lives at one fixed path on every site; its body is the site's token.
FILE_PROOF_PATH: Final = f"/.well-known/{PROOF_NAME}.txt"


@frozen
class FileProof:
    path: str
    url: str
    content: str
    content_type: str
    instructions: str

    def matches(self, body: str) -> bool:
        """Whether a fetched body proves ownership: the expected line, surrounding whitespace ignored."""
        return body.strip() == self.content.strip()


@frozen
class MetaProof:
    url: str
    tag: str
    name: str
    content: str

    def matches(self, metas: Iterable[tuple[str, str]]) -> bool:
        """Whether the page's `<meta name content>` pairs contain the proof (names compared case-blind)."""
        return any(n.strip().lower() == self.name and c.strip() == self.content for n, c in metas)


@frozen
class DnsProof:
    name: str
    value: str

    def matches(self, txt_values: Iterable[str]) -> bool:
        """Whether any TXT value (chunks already joined) is the expected one, quotes tolerated."""
        return any(v.strip().strip('"') == self.value for v in txt_values)


def dns_steps(proof: DnsProof, host: str) -> Mapping[str, str]:
    """Short steps for common DNS hosts: where the TXT record goes and what its name field takes."""
    relative = proof.name.removesuffix(f".{host}") if proof.name != host else "@"
    add = f"add a TXT record, name {relative}, value {proof.value}"
    return MappingProxyType(
        {
            "cloudflare": f"DNS > Records > Add record: type TXT, name {relative}, content {proof.value}",
            "route53": f'Hosted zones > {host} > Create record: {proof.name}, type TXT, value "{proof.value}"',
            "godaddy": f"My Products > DNS > Add: {add}",
            "namecheap": f"Advanced DNS > Add new record: TXT Record, host {relative}, value {proof.value}",
            "other": f"In your DNS host's zone for {host}, {add}; changes can take minutes to an hour",
        }
    )


@frozen
class OwnershipProofs:
    """What the owner may publish to prove ownership, all derived from the site's token."""

    file: FileProof
    meta: MetaProof
    dns: DnsProof
    agent_prompt: str


def ownership_proofs(address: SiteAddress, token: str) -> OwnershipProofs:
    path = FILE_PROOF_PATH
    file_url = f"{address.origin}{path}"
    content = f"{token}\n"
    file = FileProof(
        path=path,
        url=file_url,
        content=content,
        content_type="text/plain",
        instructions=(
            f"Serve a file at {file_url} with Content-Type text/plain whose only line is "
            f"{content.strip()} (the site's token), then ask for verification."
        ),
    )
    tag = f'<meta name="{PROOF_NAME}" content="{token}">'
    meta = MetaProof(url=f"{address.origin}/", tag=tag, name=PROOF_NAME, content=token)
    dns = DnsProof(name=f"{DNS_RECORD_PREFIX}.{address.host}", value=f"{PROOF_NAME}={token}")
    agent_prompt = (
        "Prove ownership of this site for the site-audit service with ONE of these changes, then deploy:\n"
        f"1. Add {tag} inside <head> of the home page {meta.url}\n"
        f"2. Serve {file_url} as text/plain containing exactly: {content.strip()}\n"
        f"3. Add a DNS TXT record named {dns.name} with the value {dns.value}\n"
        "Do not change anything else."
    )
    return OwnershipProofs(file=file, meta=meta, dns=dns, agent_prompt=agent_prompt)


class ProofOutcome(enum.StrEnum):
    """What checking one ownership method found."""

    MATCHED = "matched"
    NOT_FOUND = "not_found"  # no record, no tag, no file (404 and other non-2xx answers)
    WRONG_VALUE = "wrong_value"  # something is published there, but not this site's token
    FETCH_ERROR = "fetch_error"  # the page or file could not be read (network, redirect off the site)
    DNS_ERROR = "dns_error"  # the TXT lookup failed (timeout, server failure)
    NOT_CONNECTED = "not_connected"  # the console or CDN connection this method needs is not there


@frozen
class ProofCheck:
    """One method tried by `POST /sites/{id}/verify`, and why it did not match (`detail`)."""

    method: VerifyMethod
    outcome: ProofOutcome
    detail: str | None = None

    @property
    def matched(self) -> bool:
        return self.outcome is ProofOutcome.MATCHED

    @property
    def summary(self) -> str:
        return self.outcome.value if self.detail is None else f"{self.outcome.value} ({self.detail})"


# --- monitoring --------------------------------------------------------------------------------------


class Monitoring(enum.StrEnum):
    OFF = "off"
    WEEKLY = "weekly"
    DAILY = "daily"

    @property
    def interval(self) -> timedelta | None:
        return _INTERVALS.get(self)


_INTERVALS: Final[Mapping[Monitoring, timedelta]] = MappingProxyType(
    {Monitoring.WEEKLY: timedelta(days=7), Monitoring.DAILY: timedelta(days=1)}
)
_DAY: Final = timedelta(days=1)


def monitoring_time_of_day(site_id: SiteId) -> timedelta:
    """The site's own time of day (UTC) for its scheduled audits, a fixed offset from its id
    (multiplicative hashing), so monitored sites come due spread over the day rather than at midnight."""
    return timedelta(seconds=(int(site_id) * 2_654_435_761) % 86_400)


class MonitoringSkip(enum.StrEnum):
    """Why a due scheduled audit did not run (`last_skip_reason`); it is tried again one interval on."""

    INSUFFICIENT_CREDITS = ErrorCode.INSUFFICIENT_CREDITS.value
    NOT_VERIFIED = ErrorCode.SITE_NOT_VERIFIED.value
    PREVIOUS_RUNNING = "previous_audit_running"
    PLAN = ErrorCode.PLAN_LIMIT_MONITORING.value


class NoticeCode(enum.StrEnum):
    """What an answer warns about without refusing anything (`warnings` of the REST answers)."""

    INSUFFICIENT_CREDITS = ErrorCode.INSUFFICIENT_CREDITS.value  # a scheduled audit would be skipped
    MAX_RPS_CAPPED = "max_rps_capped"  # an audit runs slower than the max_rps asked or saved


@frozen
class Notice:
    """One warning of an answer: its code and a sentence saying why and what to do."""

    code: NoticeCode
    message: str


class VerifiedOnly(enum.StrEnum):
    """Operations that need a verified site (409 `site_not_verified`)."""

    LARGE_AUDIT = "an audit of more than 500 pages"
    MONITORING = "scheduled monitoring"
    RECHECK = "a recheck"
    CONSOLE = "the search-console integration"
    INDEXNOW_SUBMIT = "an IndexNow submission"
    INDEXNOW_KEY = "setting an IndexNow key"


def check_site_count(sites_in_team: int, plan_site_limit: int | None) -> None:
    """Refuse registering one more site when the plan's count is reached (None: no limit)."""
    if plan_site_limit is not None and sites_in_team >= plan_site_limit:
        raise PlanLimitSites(plan_site_limit)


def max_pages_problem(value: object) -> str | None:
    """What is wrong with a `max_pages` value against the absolute range (the plan is checked apart)."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_PAGES_CEILING:
        return None
    return f"must be an integer from 1 to {MAX_PAGES_CEILING:,}"


def max_rps_problem(value: object) -> str | None:
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and MIN_RPS <= value <= MAX_RPS  # exact for any int; false for NaN and infinities
    ):
        return None
    return f"must be a number from {MIN_RPS:g} to {MAX_RPS:g}"


def _validate_settings(max_pages: int | None, max_rps: float | None, plan_page_limit: int) -> None:
    bad: dict[str, str] = {}
    if max_pages is not None and (problem := max_pages_problem(max_pages)) is not None:
        bad["max_pages"] = problem
    if max_rps is not None and (problem := max_rps_problem(max_rps)) is not None:
        bad["max_rps"] = problem
    if bad:
        raise ValidationFailed(bad)
    if max_pages is not None and max_pages > plan_page_limit:
        raise PlanLimitMaxPages(max_pages, plan_page_limit)


# --- the site ----------------------------------------------------------------------------------------


@frozen
class SiteVerified:
    site_id: SiteId
    via: VerifyMethod
    at: datetime
    first: bool  # false for a periodic re-confirmation of an already verified site


@frozen
class SiteLost:
    site_id: SiteId
    at: datetime


@frozen
class SiteAuditSettings:
    """The limits an audit of a registered site runs with (`POST /sites/{id}/crawls`)."""

    max_pages: int
    max_rps: float
    send_crawler_secret: bool


@frozen
class Site:
    id: SiteId
    team_id: TeamId
    url: str
    host: str
    origin: str
    created_at: datetime
    verify_token: str = field(repr=False)
    crawler_secret_ref: str = field(repr=False)  # where the crawler secret is kept, never the secret
    status: SiteStatus = SiteStatus.UNVERIFIED
    verified_at: datetime | None = None  # start of the current (or, once lost, the last) verified stretch
    verified_via: VerifyMethod | None = None
    checked_at: datetime | None = None
    lost_at: datetime | None = None
    monitoring: Monitoring = Monitoring.OFF
    next_crawl_at: datetime | None = None
    last_dispatched_at: datetime | None = None
    last_skip_reason: str | None = None
    max_pages: int = DEFAULT_MAX_PAGES
    max_rps: float = DEFAULT_MAX_RPS
    alert_email: bool = True
    version: int = 0
    render: bool = False  # its audits render each HTML page in a browser (docs/rendering.md)
    rules: ScopeRules = EVERY_URL  # its audits' include, exclude and query handling (docs/audits.md)
    extract: tuple[ExtractionRule, ...] = ()  # its audits' extraction rules (docs/extraction.md)

    @classmethod
    def register(
        cls,
        *,
        site_id: SiteId,
        team_id: TeamId,
        url: str,
        verify_token: str,
        crawler_secret_ref: str,
        plan_page_limit: int,
        now: datetime,
        max_pages: int | None = None,
        max_rps: float | None = None,
        alert_email: bool = True,
    ) -> Self:
        """A new, unverified site. Raises InvalidUrl, ValidationFailed or PlanLimitMaxPages."""
        if not _TOKEN.fullmatch(verify_token):
            # The token is made by the ids port, not typed by a caller: a bad one is a wiring bug.
            raise ValueError("verify_token must be 16-128 characters from A-Z a-z 0-9 _ -")
        address = parse_site_url(url)
        _validate_settings(max_pages, max_rps, plan_page_limit)
        return cls(
            id=site_id,
            team_id=team_id,
            url=address.url,
            host=address.host,
            origin=address.origin,
            created_at=now,
            verify_token=verify_token,
            crawler_secret_ref=crawler_secret_ref,
            max_pages=max_pages if max_pages is not None else min(DEFAULT_MAX_PAGES, plan_page_limit),
            max_rps=float(max_rps) if max_rps is not None else DEFAULT_MAX_RPS,
            alert_email=alert_email,
        )

    @property
    def verified(self) -> bool:
        return self.status is SiteStatus.VERIFIED

    @property
    def address(self) -> SiteAddress:
        return SiteAddress(url=self.url, host=self.host, origin=self.origin)

    @property
    def proofs(self) -> OwnershipProofs:
        return ownership_proofs(self.address, self.verify_token)

    def verification_failed(
        self, tried: Iterable[VerifyMethod], checked: Iterable[ProofCheck] = ()
    ) -> VerificationFailed:
        """The 422 to raise when no tried method matched, naming what to publish."""
        return VerificationFailed(tried, self.proofs, checked)

    def require_verified(self, operation: VerifiedOnly) -> None:
        if not self.verified:
            raise SiteNotVerified(self.id, operation.value)

    # ownership

    def _verified(self, via: VerifyMethod | None, now: datetime) -> Self:
        """The VERIFY move: verified now (first time or again), proof checked, any loss cleared."""
        status = next_state(SITE_MOVES, self.status, SiteMove.VERIFY, entity="site")
        return evolve(
            self,
            status=status,
            verified_via=via,
            verified_at=self.verified_at if self.verified else now,
            checked_at=now,
            lost_at=None,
            version=self.version + 1,
        )

    def verify(self, via: VerifyMethod, *, now: datetime) -> tuple[Self, SiteVerified]:
        first = not self.verified
        return self._verified(via, now), SiteVerified(site_id=self.id, via=via, at=now, first=first)

    def verify_by_hand(self, *, now: datetime) -> tuple[Self, SiteVerified | None]:
        """Support verified the site without a proof (`siteaudit admin verify-site --by-hand`): verified,
        `verified_via` None; the daily re-check leaves such a site verified."""
        return self._verified(None, now), None

    def lose(self, *, now: datetime) -> tuple[Self, SiteLost]:
        """The site is no longer verified (its proof stayed gone past the grace period). Monitoring stays
        set but pauses, saying why in `last_skip_reason`, until the site is verified again."""
        status = next_state(SITE_MOVES, self.status, SiteMove.LOSE, entity="site")
        paused = MonitoringSkip.NOT_VERIFIED.value if self.monitoring is not Monitoring.OFF else None
        site = evolve(
            self,
            status=status,
            lost_at=self.lost_at if self.lost_at is not None else now,
            checked_at=now,
            last_skip_reason=paused if paused is not None else self.last_skip_reason,
            version=self.version + 1,
        )
        return site, SiteLost(site_id=self.id, at=now)

    def proof_missing(self, *, now: datetime, grace: timedelta) -> tuple[Self, SiteLost | None]:
        """A daily re-check of a verified site found no proof. The first miss sets `lost_at` and the site
        stays verified for `grace`; a miss once the grace period is over loses it (`lose`)."""
        if self.lost_at is not None and now - self.lost_at >= grace:
            return self.lose(now=now)
        lost_at = self.lost_at if self.lost_at is not None else now
        return evolve(self, lost_at=lost_at, checked_at=now, version=self.version + 1), None

    # settings

    def set_monitoring(self, mode: Monitoring, *, plan_allows_monitoring: bool, now: datetime) -> Self:
        """Raises PlanLimitMonitoring (403) or SiteNotVerified (409) for a mode other than off."""
        if mode is not Monitoring.OFF:
            if not plan_allows_monitoring:
                raise PlanLimitMonitoring()
            self.require_verified(VerifiedOnly.MONITORING)
        if mode is self.monitoring:
            # Repeating the current mode must not push the next audit further away.
            return self
        return evolve(
            self,
            monitoring=mode,
            next_crawl_at=self.first_crawl_after(now) if mode is not Monitoring.OFF else None,
            last_skip_reason=None,
            version=self.version + 1,
        )

    def update(
        self,
        *,
        plan_page_limit: int,
        max_pages: int | None = None,
        max_rps: float | None = None,
        alert_email: bool | None = None,
        render: bool | None = None,
        include: tuple[str, ...] | None = None,
        exclude: tuple[str, ...] | None = None,
        query_params: QueryParams | None = None,
        keep_params: tuple[str, ...] | None = None,
        extract: tuple[ExtractionRule, ...] | None = None,
    ) -> Self:
        """Change saved audit settings (None: unchanged; an empty list clears one). Raises
        ValidationFailed or PlanLimitMaxPages. The extraction rules' grammar is the caller's to judge
        (`siteaudit.domain.extraction.check_rules`, with the parser's view of the expressions)."""
        _validate_settings(max_pages, max_rps, plan_page_limit)
        mode = self.rules.query_params if query_params is None else query_params
        if keep_params is None:
            # Another mode than keep_listed reads no names: switching away forgets them.
            keep_params = self.rules.keep_params if mode is QueryParams.KEEP_LISTED else ()
        rules = ScopeRules(
            include=self.rules.include if include is None else include,
            exclude=self.rules.exclude if exclude is None else exclude,
            query_params=mode,
            keep_params=keep_params,
        )
        if bad := rules.faults():
            raise ValidationFailed(bad)
        updated = evolve(
            self,
            max_pages=self.max_pages if max_pages is None else max_pages,
            max_rps=self.max_rps if max_rps is None else float(max_rps),
            alert_email=self.alert_email if alert_email is None else alert_email,
            render=self.render if render is None else render,
            rules=rules,
            extract=self.extract if extract is None else extract,
        )
        if updated == self:
            return self
        return evolve(updated, version=self.version + 1)

    def audit_settings(
        self, *, plan_page_limit: int, max_pages: int | None = None, max_rps: float | None = None
    ) -> SiteAuditSettings:
        """Limits for an audit of this site (docs/rest-api.md "Registered sites"): saved settings, capped by
        plan and verification.

        Raises ValidationFailed, PlanLimitMaxPages (403), or SiteNotVerified (409) for more than 500
        pages on an unverified site.
        """
        _validate_settings(max_pages, max_rps, plan_page_limit)
        if max_pages is None:
            pages = min(self.max_pages, plan_page_limit)
            if not self.verified:
                pages = min(pages, UNVERIFIED_MAX_PAGES)
        else:
            if max_pages > UNVERIFIED_MAX_PAGES:
                self.require_verified(VerifiedOnly.LARGE_AUDIT)
            pages = max_pages
        rps = self.max_rps if max_rps is None else min(float(max_rps), self.max_rps)
        if not self.verified:
            rps = min(rps, UNVERIFIED_MAX_RPS)
        return SiteAuditSettings(max_pages=pages, max_rps=rps, send_crawler_secret=self.verified)

    # the monitoring scheduler

    def first_crawl_after(self, now: datetime) -> datetime:
        """The next moment after `now` at the site's own time of day (`monitoring_time_of_day`)."""
        slot = now.replace(hour=0, minute=0, second=0, microsecond=0) + monitoring_time_of_day(self.id)
        return slot if slot > now else slot + _DAY

    def monitoring_skip_reason(
        self, *, plan_allows_monitoring: bool, previous_running: bool = False
    ) -> MonitoringSkip | None:
        """Why a due scheduled audit must not run now (None: it may, credits permitting)."""
        if not plan_allows_monitoring:
            return MonitoringSkip.PLAN
        if not self.verified:
            return MonitoringSkip.NOT_VERIFIED
        if previous_running:
            return MonitoringSkip.PREVIOUS_RUNNING
        return None

    def as_shown(self, *, plan_allows_monitoring: bool) -> Self:
        """The site as GET /sites shows it: monitoring set on a plan that no longer includes it stays set
        (an upgrade resumes it, nothing to redo) but every scheduled audit is skipped, and
        `last_skip_reason` says so from the downgrade on, not only after the next due time."""
        if self.monitoring is Monitoring.OFF or plan_allows_monitoring:
            return self
        return evolve(self, last_skip_reason=MonitoringSkip.PLAN.value)

    def scheduled_max_pages(self, *, plan_page_limit: int, last_pages: int | None) -> int:
        """The page cap of a scheduled audit, which is what it reserves: the pages of the site's last done
        audit (None: there is none) plus headroom, within the saved `max_pages` and the plan's limit."""
        cap = min(self.max_pages, plan_page_limit)
        if last_pages is None:
            return cap
        return min(cap, last_pages + max(last_pages // SCHEDULED_HEADROOM_SHARE, SCHEDULED_HEADROOM_MIN))

    def notices(self, *, balance: int, scheduled_pages: int) -> tuple[Notice, ...]:
        """What the site's answer warns about: saved settings an audit will not run with, and scheduled
        audits the owner's `balance` (tenths) cannot cover (`scheduled_pages` is their page cap)."""
        found: list[Notice] = []
        if self.monitoring is not Monitoring.OFF and balance < scheduled_pages * PAGE_COST:
            found.append(
                Notice(
                    NoticeCode.INSUFFICIENT_CREDITS,
                    f"a scheduled audit reserves {scheduled_pages:,} credits (its page cap) and the team "
                    f"owner has {as_number(balance):,}: it is skipped, with last_skip_reason "
                    "insufficient_credits, until credits are added or max_pages is lowered",
                )
            )
        if not self.verified and self.max_rps > UNVERIFIED_MAX_RPS:
            found.append(
                Notice(
                    NoticeCode.MAX_RPS_CAPPED,
                    f"max_rps {self.max_rps:g} is saved, but audits of a site not verified run at most "
                    f"{UNVERIFIED_MAX_RPS:g} requests a second until it is verified",
                )
            )
        return tuple(found)

    def is_due(self, now: datetime) -> bool:
        return (
            self.monitoring is not Monitoring.OFF
            and self.next_crawl_at is not None
            and self.next_crawl_at <= now
        )

    def claimed(self, *, now: datetime) -> Self:
        """A scheduler took the due audit: the next one is the first slot after `now` a whole number of
        intervals on from this one, so the time of day stays the site's however late the scheduler ran."""
        interval = self._require_monitoring()
        due = self.next_crawl_at if self.next_crawl_at is not None else self.first_crawl_after(now)
        if due <= now:
            due += ((now - due) // interval + 1) * interval
        return evolve(self, next_crawl_at=due, version=self.version + 1)

    def dispatched(self, *, now: datetime) -> Self:
        """The claimed scheduled audit was started."""
        self._require_monitoring()
        return evolve(self, last_dispatched_at=now, last_skip_reason=None, version=self.version + 1)

    def skipped(self, reason: MonitoringSkip) -> Self:
        """The claimed scheduled audit could not run: say why (it is tried again at the next slot)."""
        self._require_monitoring()
        return evolve(self, last_skip_reason=reason.value, version=self.version + 1)

    def _require_monitoring(self) -> timedelta:
        interval = self.monitoring.interval
        if interval is None:
            raise Conflict(f"site {self.id} has monitoring off; nothing is scheduled")
        return interval


@frozen
class SchedulerTerms:
    """How the monitoring scheduler runs (SITEAUDIT_PROOF_GRACE_DAYS, SITEAUDIT_SCHEDULER_EVERY_S)."""

    proof_grace: timedelta = timedelta(days=7)  # a missing proof keeps the site verified this long
    recheck_every: timedelta = _DAY  # verified sites' proofs are read again this often
    every_s: float = 60.0  # how often a scheduler looks for due work
    batch: int = 100  # sites claimed per transaction
