# Over 500 lines: one reader per REST answer, turning the JSON back into the typed results.
"""The REST answers read back into the application's typed results.

Each reader takes the JSON of one answer (docs/rest-api.md "Endpoints") and returns the value the in-process
application returns for the same call, as far as the interface shows it. What `/v1` never shows is filled with
the neutral values below and documented here once: who started and who pays for an audit (`UNSHOWN_USER`), a
site's creation time (`UNSHOWN_TIME`) and crawler secret reference (empty), a listed page's internal url id
(0). Rendering a read-back value through the REST views gives the JSON it was read from.
"""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import urlsplit

from siteaudit.adapters.report_json import converter as report_converter
from siteaudit.adapters.report_json import report_from_json
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditStatus, AuditTrigger
from siteaudit.domain.console_answers import (
    ConsoleSummary,
    InspectAnswer,
    NotIndexedAnswer,
    Opportunities,
    UrlStatus,
)
from siteaudit.domain.extraction import Extracted
from siteaudit.domain.facts import FetchError
from siteaudit.domain.ids import AuditId, SiteId, TeamId, UserId
from siteaudit.domain.issue import Issue, Severity
from siteaudit.domain.report import Report
from siteaudit.domain.site import (
    Monitoring,
    Notice,
    NoticeCode,
    ProofCheck,
    ProofOutcome,
    Site,
    SiteStatus,
    VerifyMethod,
)
from siteaudit.domain.triage import IndexTriage
from siteaudit.ports.application import (
    AccountView,
    AuditDetail,
    Listing,
    OwnershipProved,
    PaymentLink,
    SiteDetail,
    SiteOwnership,
)
from siteaudit.ports.crawl import PageRow

UNSHOWN_USER: Final = UserId(0)
UNSHOWN_TIME: Final = datetime(1970, 1, 1, tzinfo=UTC)

J = Mapping[str, Any]


def tenths(number: float) -> int:
    return round(float(number) * 10)


def moment(value: str | None) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def listing(answer: J, read: Any) -> Listing[Any]:
    """A paginated answer (`{data, meta}`) as a Listing of what `read` makes of each row."""
    return Listing(items=[read(row) for row in answer["data"]], total=int(answer["meta"]["total"]))


def account(answer: J) -> AccountView:
    return AccountView(
        balance=tenths(answer["balance"]),
        team_id=int(answer["team_id"]),
        team_credits=tenths(answer["team_credits"]),
        crawls_total=int(answer["crawls_total"]),
        credits_spent_30d=tenths(answer["credits_spent_30d"]),
        team_credits_spent_30d=tenths(answer["team_credits_spent_30d"]),
        api_key_prefix=str(answer["api_key_prefix"]),
    )


def _audit(answer: J, caller: Caller, **more: Any) -> Audit:
    created = moment(answer["created_at"])
    assert created is not None
    return Audit(
        id=AuditId(int(answer["crawl_id"])),
        team_id=caller.team_id,
        user_id=UNSHOWN_USER,
        payer_id=UNSHOWN_USER,
        url=answer["site_url"],
        origin=origin_of(answer["site_url"]),
        created_at=created,
        max_pages=int(answer["max_pages"]),
        site_id=None if answer["site_id"] is None else SiteId(int(answer["site_id"])),
        trigger=AuditTrigger(answer["trigger"]),
        status=AuditStatus(answer["status"]),
        finished_at=moment(answer["finished_at"]),
        archived_at=moment(answer["archived_at"]),
        pages_crawled=int(answer["pages_crawled"]),
        **more,
    )


def audit_row(answer: J, caller: Caller) -> Audit:
    """A row of `GET /crawls` (and a site's `latest_crawl`)."""
    return _audit(answer, caller, health_score=answer["health_score"])


def audit_detail(answer: J, caller: Caller) -> AuditDetail:
    """`GET /crawls/{id}`: the detail carries no health score (the list rows do)."""
    audit = _audit(
        answer,
        caller,
        concurrency=int(answer["concurrency"]),
        max_rps=float(answer["max_rps"]),
        credits_reserved=tenths(answer["credits_reserved"]),
        verify_token_set=bool(answer["verify_token_set"]),
        started_at=moment(answer["started_at"]),
        last_progress_at=moment(answer.get("last_progress_at")),
        failure_reason=answer["failure_reason"],
        render=bool(answer.get("render", False)),
    )
    return AuditDetail(audit=audit, stalled=bool(answer.get("stalled", False)))


def report(answer: J) -> Report:
    return report_from_json(answer)


def issue(answer: J) -> Issue:
    return Issue(
        check_code=answer["check_code"],
        severity=Severity(answer["severity"]),
        url=answer["url"],
        template=answer["template"],
        details=dict(answer["details"] or {}),
    )


def page(answer: J) -> PageRow:
    return PageRow(
        url_id=0,
        url=answer["url"],
        status_code=answer["status_code"],
        depth=int(answer["depth"]),
        title=answer["title"],
        meta_description=answer["meta_description"],
        word_count=answer["word_count"] or 0,
        blocked_by=answer["blocked_by"],
        fetch_error=None if answer["fetch_error"] is None else FetchError(answer["fetch_error"]),
        excluded_by=answer.get("excluded_by"),
        extracted=tuple(
            Extracted(name, tuple(values)) for name, values in (answer.get("extract") or {}).items()
        ),
    )


def notices(answer: J) -> tuple[Notice, ...]:
    """The `warnings` of an answer (none from a server that sends none)."""
    return tuple(Notice(NoticeCode(w["code"]), w["message"]) for w in answer.get("warnings", ()))


def site(answer: J, *, lost_at: datetime | None = None, checked_at: datetime | None = None) -> Site:
    """A site answer; `verify_token` only where the answer has it (create and detail)."""
    verified = bool(answer["verified"])
    if verified:
        status = SiteStatus.VERIFIED
    elif lost_at is not None:
        status = SiteStatus.LOST
    else:
        status = SiteStatus.UNVERIFIED
    via = answer["verified_via"]
    return Site(
        id=SiteId(int(answer["id"])),
        team_id=TeamId(int(answer["team_id"])),
        url=answer["url"],
        host=answer["host"],
        origin=origin_of(answer["url"]),
        created_at=UNSHOWN_TIME,
        verify_token=answer.get("verify_token", ""),
        crawler_secret_ref="",
        status=status,
        verified_at=moment(answer["verified_at"]),
        verified_via=None if via is None else VerifyMethod(via),
        checked_at=checked_at,
        lost_at=lost_at,
        monitoring=Monitoring(answer["monitoring"]),
        next_crawl_at=moment(answer["next_crawl_at"]),
        last_dispatched_at=moment(answer["last_dispatched_at"]),
        last_skip_reason=answer["last_skip_reason"],
        max_pages=int(answer["max_pages"]),
        max_rps=float(answer["max_rps"]),
        alert_email=bool(answer["alert_email"]),
        render=bool(answer.get("render", False)),
    )


def sites(answer: J) -> Sequence[Site]:
    return [site(row) for row in answer["data"]]


def site_detail(answer: J, caller: Caller) -> SiteDetail:
    latest = answer["latest_crawl"]
    return SiteDetail(
        site=site(answer),
        latest_audit=None if latest is None else audit_row(latest, caller),
        trend=[int(score) for score in answer["trend"]],
    )


def site_ownership(detail: J, verification: J) -> SiteOwnership:
    """`GET /sites/{id}` (the token the proofs derive from) with `GET /sites/{id}/verification`."""
    methods = verification["methods"]
    return SiteOwnership(
        site=site(
            detail, lost_at=moment(verification["lost_at"]), checked_at=moment(verification["checked_at"])
        ),
        console_connected=bool(methods["gsc"]["connected"]),
        console_property=methods["gsc"]["property"],
        cdn_connected=bool(methods["cloudflare"]["connected"]),
        cdn_zone=methods["cloudflare"]["zone"],
    )


def ownership_proved(answer: J) -> OwnershipProved:
    checked = [
        ProofCheck(
            method=VerifyMethod(c["method"]), outcome=ProofOutcome(c["result"]), detail=c.get("detail")
        )
        for c in answer["checked"]
    ]
    return OwnershipProved(site=site(answer), checked=checked)


# --- search console, index triage, billing links (docs/rest-api.md "Search console", "Billing") ----------

# The console answers are the domain's values as REST unstructured them: structured back with the
# report's converter plus ISO times.
_values: Final = report_converter.copy()
_values.register_structure_hook(datetime, lambda value, _: moment(value))


def console_summary(answer: J) -> ConsoleSummary:
    return _values.structure(answer, ConsoleSummary)


def not_indexed(answer: J) -> NotIndexedAnswer:
    return _values.structure(answer, NotIndexedAnswer)


def console_url(answer: J) -> UrlStatus:
    """`GET .../gsc/url`: the console facts are under `gsc` (and its alias `sengine`)."""
    return _values.structure({**answer, "console": answer["gsc"]}, UrlStatus)


def opportunities(answer: J) -> Opportunities:
    return _values.structure(answer, Opportunities)


def inspected(answer: J) -> InspectAnswer:
    return _values.structure(answer, InspectAnswer)


def index_triage(answer: J) -> IndexTriage:
    return _values.structure(answer, IndexTriage)


def payment_link(answer: J) -> PaymentLink:
    return PaymentLink(url=str(answer["url"]))
