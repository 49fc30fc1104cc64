# Over 500 lines: the key, its checks, platform detection and the daily allowance are one site's IndexNow state.
"""IndexNow (docs/rest-api.md "IndexNow"): a site's key and where its file lives, the key checks and key
detection, the daily URL allowance, and how a submission is split, judged and summed up.

IndexNow notifies the engines that take part in it (not the largest search engine). A submission needs a
verified site and a verified key; the allowance is 10,000 URLs per site per UTC day, each URL counted
once a day however often it is sent again (a retried request spends nothing twice).
"""

import enum
import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime
from typing import Final, Self
from urllib.parse import urlsplit

from attrs import evolve, frozen

from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.ids import AuditId, SiteId, TeamId
from siteaudit.domain.network import CRAWL_PORTS, url_port

KEY_PATTERN: Final = re.compile(r"[A-Za-z0-9-]{8,128}")
KEY_ALPHABET: Final = "abcdef0123456789"
GENERATED_KEY_LENGTH: Final = 32
DAILY_URL_LIMIT: Final = 10_000  # per site per UTC day
MAX_SUBMIT_URLS: Final = 10_000  # per request
BATCH_URLS: Final = 10_000  # per POST to the IndexNow endpoint (the protocol's own limit)
DETECT_MAX_REQUESTS: Final = 10  # key files fetched by one detection
RECENT_SUBMISSIONS: Final = 10  # shown in the status's `recent`
# The engines the shared IndexNow endpoint passes submissions on to (indexnow.org, "Which search engines
# support IndexNow"). The largest search engine is not one of them.
ENGINES: Final = ("Bing", "Naver", "Seznam.cz", "Yandex", "Yep")
NOTE: Final = (
    "IndexNow notifies " + ", ".join(ENGINES[:-1]) + f" and {ENGINES[-1]}. The largest search engine "
    "does not take part and is not notified (google_supported and sengine_supported are false): it finds "
    "changes through its own crawling and your sitemaps."
)


# --- errors -------------------------------------------------------------------------------------------


class InvalidIndexNowKey(DomainError):
    code = ErrorCode.INVALID_INDEXNOW_KEY
    default_message = "an IndexNow key is 8-128 characters from A-Z a-z 0-9 and -"


class InvalidIndexNowKeyLocation(DomainError):
    """422 `invalid_indexnow_key_location` (docs/security.md), its envelope naming the field in `fields` as a
    `validation_failed` answer does."""

    code = ErrorCode.INVALID_INDEXNOW_KEY_LOCATION

    def __init__(self, location: str, reason: str) -> None:
        shown = location if len(location) <= 200 else location[:200] + "..."
        super().__init__(f"key_location {shown!r} is not acceptable: {reason}")
        self.reason = reason
        self.extra = {"fields": {"key_location": reason}}


class IndexNowKeyUnverified(DomainError):
    code = ErrorCode.INDEXNOW_KEY_UNVERIFIED

    def __init__(self, key_file_url: str | None) -> None:
        if key_file_url is None:  # the site has no key yet: reading its IndexNow status makes one
            super().__init__(
                "the site has no IndexNow key yet: GET its indexnow status for the key and the file to"
                " serve, then POST check-key"
            )
            return
        super().__init__(
            f"the IndexNow key is not verified: serve {key_file_url} containing the key, then POST check-key"
        )


class IndexNowUrlNotInSite(DomainError):
    code = ErrorCode.URL_NOT_IN_SITE

    def __init__(self, host: str, skipped: int) -> None:
        super().__init__(f"none of the {skipped:,} URLs is on the site's host {host}")


class IndexNowCap(DomainError):
    code = ErrorCode.INDEXNOW_CAP

    def __init__(self, limit: int, capped: int) -> None:
        super().__init__(
            f"the site's allowance of {limit:,} URLs for this UTC day is used up ({capped:,} URLs not sent); "
            "it starts again at midnight UTC"
        )
        self.capped = capped


class IndexNowRejected(DomainError):
    code = ErrorCode.INDEXNOW_REJECTED

    def __init__(self, reason: str) -> None:
        super().__init__(f"IndexNow accepted none of the URLs: {reason}")
        self.reason = reason


# --- the key ------------------------------------------------------------------------------------------


class KeySource(enum.StrEnum):
    GENERATED = "generated"
    EXISTING = "existing"  # set by the owner with PUT .../indexnow/key


class KeyCheckResult(enum.StrEnum):
    VERIFIED = "verified"
    FAILED = "failed"


class KeyCheckReason(enum.StrEnum):
    """Why a key file did not verify the key."""

    NOT_FOUND = "not_found"  # the file answered 404 or another non-2xx status
    WRONG_CONTENT = "wrong_content"  # something is served there, but not the key
    FETCH_ERROR = "fetch_error"  # the file could not be read (network, redirect off the site, refused)


@frozen
class KeyCheck:
    """One fetch of the key file (`check-key`, `PUT key`): its result and, when it failed, why."""

    result: KeyCheckResult
    reason: KeyCheckReason | None
    detail: str | None
    url: str
    at: datetime

    @property
    def verified(self) -> bool:
        return self.result is KeyCheckResult.VERIFIED


def judge_key_file(
    key: str, url: str, *, status: int | None, body: str, error: str | None, at: datetime
) -> KeyCheck:
    """Whether a fetched key file verifies `key`: a 2xx answer whose text, stripped, is the key."""
    if error is not None:
        return KeyCheck(KeyCheckResult.FAILED, KeyCheckReason.FETCH_ERROR, error[:300], url, at)
    if status is None or not 200 <= status < 300:
        return KeyCheck(KeyCheckResult.FAILED, KeyCheckReason.NOT_FOUND, f"{url} answered {status}", url, at)
    if body.strip() != key:
        return KeyCheck(
            KeyCheckResult.FAILED, KeyCheckReason.WRONG_CONTENT, "the file does not contain the key", url, at
        )
    return KeyCheck(KeyCheckResult.VERIFIED, None, None, url, at)


def require_key(key: object) -> str:
    """Raises InvalidIndexNowKey (422) for anything but 8-128 characters of A-Z a-z 0-9 -."""
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise InvalidIndexNowKey()
    return key


def default_key_file_url(origin: str, key: str) -> str:
    """Where the key file lives unless told otherwise: `/<key>.txt` at the root of the site's origin
    (`https://<host>/<key>.txt` for an https site on its default port)."""
    return f"{origin}/{key}.txt"


def require_key_location(location: object, *, origin: str, host: str) -> str:
    """A key file elsewhere: an https URL on the site's host whose path ends in `.txt` (a URL
    on the site's own origin is accepted too, so an http site in development can be served), on the
    crawler's ports: 80, 443 or the site's own explicit port, never another port of the host
    (docs/security.md, "Outbound addresses and signatures"). Raises InvalidIndexNowKeyLocation (422)."""
    if not isinstance(location, str) or not location or len(location) > 2_048:
        raise InvalidIndexNowKeyLocation(str(location), "a URL of at most 2,048 characters is required")
    if any(ch <= " " or ch in "\x7f\\" for ch in location):
        raise InvalidIndexNowKeyLocation(location, "it contains spaces, control characters or backslashes")
    try:
        parts = urlsplit(location)
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError:
        raise InvalidIndexNowKeyLocation(location, "it cannot be parsed") from None
    if parts.username is not None or parts.password is not None:
        raise InvalidIndexNowKeyLocation(location, "user names and passwords are not allowed")
    if (parts.hostname or "").rstrip(".").lower() != host:
        raise InvalidIndexNowKeyLocation(location, f"it must be on the site's host {host}")
    allowed = CRAWL_PORTS | {url_port(origin) or 443}
    if url_port(location) not in allowed:
        shown = ", ".join(str(port) for port in sorted(allowed))
        raise InvalidIndexNowKeyLocation(location, f"its port must be one the crawler uses: {shown}")
    on_origin = location.startswith(origin + "/")
    if parts.scheme.lower() != "https" and not on_origin:
        raise InvalidIndexNowKeyLocation(location, "it must be an https URL")
    if not parts.path.endswith(".txt") or parts.query or parts.fragment:
        raise InvalidIndexNowKeyLocation(location, "its path must end in .txt (no query or fragment)")
    return location


def agent_prompt(key: str, key_file_url: str) -> str:
    return (
        "Publish this site's IndexNow key so search engines that support IndexNow accept its URL "
        "notifications:\n"
        f"1. Serve {key_file_url} with Content-Type text/plain; charset=utf-8\n"
        f"2. Its whole content is exactly: {key}\n"
        "3. Answer 200 to anyone (no login, no redirect to another host); change nothing else."
    )


# --- detection ----------------------------------------------------------------------------------------


class DetectionStatus(enum.StrEnum):
    PENDING = "pending"  # a detection is running (detections run inside the request: not kept)
    FOUND = "found"  # a served key was confirmed: a suggestion, set it with PUT .../indexnow/key
    NONE = "none"  # no candidate was confirmed
    MANAGED = "managed"  # the site's platform submits to IndexNow for it (see `platform_signal`)


class Platform(enum.StrEnum):
    """What a site's home page shows it is served by, as `detection.platform` names it. Which ones
    submit to IndexNow by themselves, from which vendor statement, and the signal read: docs/indexnow.md.
    Cloudflare carries its vendor's name, as the `cloudflare` verification method does."""

    CLOUDFLARE = "cloudflare"  # in front of the site; submits only with Crawler Hints on (unseen)
    WIX = "wix"  # submits for sites on a paid plan with their own domain
    YOAST = "yoast"  # Yoast SEO Premium (WordPress) submits on publish and update


@frozen
class PlatformSignal:
    platform: Platform
    managed: bool  # the platform submits for the site by itself
    evidence: str  # the header or markup it was told by


_YOAST_PREMIUM: Final = "optimized with the Yoast SEO Premium plugin"
_WIX_FREE_SUFFIX: Final = ".wixsite.com"  # free Wix sites live here; only paid plans submit


def platform_signal(
    headers: Iterable[tuple[str, str]], metas: Iterable[tuple[str, str]], text: str, *, host: str
) -> PlatformSignal | None:
    """The platform a home page's answer shows (header names lower-case, `metas` its <head>'s
    (name, content) pairs), None when it shows none. Read in this order, the first that matches decides
    (docs/indexnow.md): Wix (generator meta tag `Wix.com Website Builder`, or an `x-wix-request-id`
    header), Yoast SEO Premium (its "optimized with the Yoast SEO Premium plugin" comment), Cloudflare
    (`cf-ray`, or `server: cloudflare`), which is never `managed`: whether Crawler Hints is on cannot be
    seen from outside."""
    header = {name.lower(): value for name, value in headers}
    generator = next((content for name, content in metas if name.lower() == "generator"), "")
    if generator.lower().startswith("wix.com") or "x-wix-request-id" in header:
        evidence = f"generator {generator!r}" if generator else "header x-wix-request-id"
        return PlatformSignal(Platform.WIX, not host.endswith(_WIX_FREE_SUFFIX), evidence)
    if _YOAST_PREMIUM in text:
        return PlatformSignal(Platform.YOAST, True, "the Yoast SEO Premium comment")
    if "cf-ray" in header or header.get("server", "").strip().lower() == "cloudflare":
        return PlatformSignal(Platform.CLOUDFLARE, False, "header cf-ray or server: cloudflare")
    return None


class DetectionSource(enum.StrEnum):
    SITE = "site"  # the site's own key
    TEAM = "team"  # a key verified on another verified site of the team
    AUDIT = "audit"  # a root key file seen in the site's latest audit


@frozen
class KeyCandidate:
    key: str
    source: DetectionSource


@frozen
class Detection:
    status: DetectionStatus
    key: str | None
    key_file_url: str | None
    source: DetectionSource | None
    platform: str | None
    checked_at: datetime
    requests: int = 0  # key files fetched


_ROOT_TXT: Final = re.compile(r"/([A-Za-z0-9-]{8,128})\.txt")


def root_key_files(urls: Iterable[str], origin: str) -> Iterator[str]:
    """Keys of the files at `<origin>/<key>.txt` among an audit's URLs (every URL it saw)."""
    prefix_length = len(origin)
    for url in urls:
        if url.startswith(origin) and (match := _ROOT_TXT.fullmatch(url[prefix_length:])) is not None:
            yield match.group(1)


def detection_candidates(
    own_key: str, team_keys: Iterable[str], audit_keys: Iterable[str], *, limit: int = DETECT_MAX_REQUESTS
) -> tuple[KeyCandidate, ...]:
    """The keys worth fetching, in the documented order (the site's own key, keys verified on the team's other
    verified sites, root key files of the latest audit), each once, at most `limit`."""
    found: list[KeyCandidate] = []
    seen: set[str] = set()
    for keys, source in (
        ((own_key,), DetectionSource.SITE),
        (team_keys, DetectionSource.TEAM),
        (audit_keys, DetectionSource.AUDIT),
    ):
        for key in keys:
            if len(found) >= limit:
                return tuple(found)
            if key not in seen and KEY_PATTERN.fullmatch(key):
                seen.add(key)
                found.append(KeyCandidate(key, source))
    return tuple(found)


# --- the site's IndexNow state ------------------------------------------------------------------------


@frozen
class IndexNowSite:
    """A site's IndexNow settings and today's use of the allowance (one per site, made on first use)."""

    site_id: SiteId
    team_id: TeamId
    key: str
    key_source: KeySource = KeySource.GENERATED
    key_location: str | None = None  # None: default_key_file_url
    key_verified_at: datetime | None = None
    last_check: KeyCheck | None = None
    auto: bool = False
    auto_since: datetime | None = None  # when auto was last turned on; None on rows from before 0016
    last_submit_at: datetime | None = None
    day: date | None = None  # the UTC day `used` counts
    used: int = 0
    detection: Detection | None = None
    version: int = 0

    @classmethod
    def generated(cls, site_id: SiteId, team_id: TeamId, key: str) -> Self:
        return cls(site_id=site_id, team_id=team_id, key=require_key(key))

    @property
    def key_verified(self) -> bool:
        return self.key_verified_at is not None

    def key_file_url(self, origin: str) -> str:
        return self.key_location or default_key_file_url(origin, self.key)

    def _next(self, **changes: object) -> Self:
        return evolve(self, **changes, version=self.version + 1)  # type: ignore[arg-type]

    def with_key(self, key: str, location: str | None) -> Self:
        """An existing key (PUT .../indexnow/key): not verified until its file is checked."""
        return self._next(
            key=key,
            key_source=KeySource.EXISTING,
            key_location=location,
            key_verified_at=None,
            last_check=None,
        )

    def checked(self, check: KeyCheck) -> Self:
        """The key file was fetched: verified when it held the key; a failed check unverifies the key."""
        verified_at = (self.key_verified_at or check.at) if check.verified else None
        return self._next(key_verified_at=verified_at, last_check=check)

    def with_auto(self, auto: bool, at: datetime) -> Self:
        """Auto-submit on from `at` (audits that end from then on submit), or off."""
        if auto == self.auto:
            return self
        return self._next(auto=auto, auto_since=at if auto else None)

    def submits_after(self, ended_at: datetime | None) -> bool:
        """Whether an audit that ended at `ended_at` submits: auto was on when it ended. An audit that
        ended before auto was turned on submits nothing, however late its finalisation runs."""
        if not self.auto:
            return False
        return self.auto_since is None or (ended_at is not None and ended_at >= self.auto_since)

    def detected(self, detection: Detection) -> Self:
        return self._next(detection=detection)

    def used_on(self, day: date) -> int:
        return self.used if self.day == day else 0

    def reserve(self, wanted: int, *, day: date, limit: int = DAILY_URL_LIMIT) -> tuple[Self, int]:
        """Take up to `wanted` URLs of `day`'s allowance: the state after, and how many were granted."""
        used = self.used_on(day)
        granted = max(0, min(wanted, limit - used))
        if granted == 0 and self.day == day:
            return self, 0
        return self._next(day=day, used=used + granted), granted

    def submitted(self, at: datetime) -> Self:
        return self._next(last_submit_at=at)


# --- submitting ---------------------------------------------------------------------------------------


class SubmitStatus(enum.StrEnum):
    OK = "ok"  # every request answered 200
    ACCEPTED = "accepted"  # every request was taken, some with 202 (the key is still being validated)
    PARTIAL = "partial"  # some requests failed (see `batches`)


class SubmitTrigger(enum.StrEnum):
    API = "api"
    AUTO = "auto"  # after an audit of a site with auto-submit on


# The protocol's documented answers (indexnow.org/documentation, "Response format").
ANSWER_CODES: Final = {
    400: "bad_request",  # invalid format
    403: "key_not_valid",  # key not found, or the file does not hold it
    422: "urls_not_for_key",  # URLs of another host, or a key that does not match the protocol
    429: "too_many_requests",  # too many requests (potential spam)
}
NETWORK_ERROR: Final = "network_error"


def error_code_of(status_code: int | None) -> str | None:
    if status_code in (200, 202):
        return None
    if status_code is None:
        return NETWORK_ERROR
    return ANSWER_CODES.get(status_code, f"http_{status_code}")


@frozen
class BatchResult:
    """One POST to the IndexNow endpoint: the URLs it carried and what the endpoint answered."""

    urls: int
    status_code: int | None
    error_code: str | None = None
    detail: str | None = None

    @property
    def accepted(self) -> bool:
        return self.status_code in (200, 202)


def url_host(url: str) -> str | None:
    """The lower-case host of an http(s) URL, None for anything else."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https"):
        return None
    return (parts.hostname or "").rstrip(".").lower() or None


def split_by_host(urls: Iterable[str], host: str) -> tuple[tuple[str, ...], int]:
    """The URLs on `host` (each once, first order kept) and how many were skipped (other hosts, not
    http(s), repeats do not count as skipped)."""
    kept: list[str] = []
    seen: set[str] = set()
    skipped = 0
    for url in urls:
        if url_host(url) != host:
            skipped += 1
        elif url not in seen:
            seen.add(url)
            kept.append(url)
    return tuple(kept), skipped


def batches(urls: Sequence[str], size: int = BATCH_URLS) -> Iterator[Sequence[str]]:
    for start in range(0, len(urls), size):
        yield urls[start : start + size]


def submit_status(results: Sequence[BatchResult]) -> SubmitStatus:
    """`ok`, `accepted` or `partial`. Raises IndexNowRejected (502) when no request was accepted."""
    accepted = [r for r in results if r.accepted]
    if not accepted:
        failed = results[0] if results else BatchResult(0, None, NETWORK_ERROR)
        raise IndexNowRejected(
            f"the endpoint answered {failed.status_code or 'nothing'} ({failed.error_code})"
            + (f": {failed.detail}" if failed.detail else "")
        )
    if len(accepted) < len(results):
        return SubmitStatus.PARTIAL
    if all(r.status_code == 200 for r in results):
        return SubmitStatus.OK
    return SubmitStatus.ACCEPTED


@frozen
class Submission:
    """One submission as `recent` shows it (the audit behind an automatic one in `audit_id`)."""

    site_id: SiteId
    at: datetime
    trigger: SubmitTrigger
    urls: int  # URLs sent in requests
    submitted: int  # of them, accepted
    requests: int
    status: str  # a SubmitStatus, or "rejected"
    status_code: int | None
    audit_id: AuditId | None = None
