"""What the IndexNow use cases answer (docs/rest-api.md "IndexNow"): one attrs class per answer, shown as
JSON by every door; the OpenAPI components are generated from these classes."""

from datetime import datetime

from attrs import frozen

from siteaudit.domain.indexnow import (
    DetectionSource,
    DetectionStatus,
    KeyCheckReason,
    KeyCheckResult,
    KeySource,
    SubmitStatus,
)


@frozen
class IndexNowToday:
    """Today's (UTC) use of the site's allowance: URLs counted, of `limit`."""

    used: int
    limit: int


@frozen
class IndexNowSubmission:
    """One recent submission. `trigger` is `api` or `auto` (after the audit `crawl_id`); `status` is
    `ok`, `accepted`, `partial`, `rejected`, or why an automatic one sent nothing (`not_verified`,
    `key_unverified`, `no_changes`, `capped`)."""

    at: datetime
    trigger: str
    urls: int
    submitted: int
    requests: int
    status: str
    status_code: int | None
    crawl_id: int | None


@frozen
class IndexNowDetection:
    """The latest key detection: `found` suggests `key` (served at `key_file_url`, found from `source`:
    `site`, `team` or `audit`); the site's key changes only with PUT .../indexnow/key."""

    status: DetectionStatus
    key: str | None
    key_file_url: str | None
    source: DetectionSource | None
    platform: str | None
    checked_at: datetime


@frozen
class IndexNowStatus:
    """`GET /sites/{id}/indexnow`. `google_supported` and its alias `sengine_supported` are false: the
    largest search engine does not take part in IndexNow and is not notified (`note`); `engines` are
    those that are."""

    key: str
    key_source: KeySource
    key_location: str | None
    key_file_url: str
    key_file_content: str
    key_verified: bool
    key_verified_at: datetime | None
    auto: bool
    last_submit_at: datetime | None
    today: IndexNowToday
    recent: tuple[IndexNowSubmission, ...]
    agent_prompt: str
    detection: IndexNowDetection | None
    engines: tuple[str, ...]
    google_supported: bool
    sengine_supported: bool
    note: str


@frozen
class IndexNowKeyCheck(IndexNowStatus):
    """`check-key` and `PUT key`: `result` of fetching the key file, `reason` (`not_found`,
    `wrong_content`, `fetch_error`) and `detail` when it failed, and the status after."""

    result: KeyCheckResult
    reason: KeyCheckReason | None
    detail: str | None


@frozen
class IndexNowBatch:
    """One request to the IndexNow endpoint: URLs carried, its answer (null: none), `error_code` when not
    accepted (`bad_request`, `key_not_valid`, `urls_not_for_key`, `too_many_requests`, `network_error`,
    `http_<status>`)."""

    urls: int
    status_code: int | None
    error_code: str | None
    accepted: bool


@frozen
class IndexNowSubmitResult:
    """`POST /sites/{id}/indexnow`: URLs `submitted` (accepted, including URLs accepted earlier today and
    not sent again), `requests` made, `skipped` URLs of other hosts, `capped` URLs left out by the daily
    allowance, one entry per request in `batches`."""

    submitted: int
    requests: int
    status: SubmitStatus
    status_code: int | None
    error_code: str | None
    skipped: int
    capped: int
    batches: tuple[IndexNowBatch, ...]
    reason: str | None
    today: IndexNowToday
