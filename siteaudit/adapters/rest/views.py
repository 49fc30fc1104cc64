# Over 500 lines: one attrs view per REST answer, from which the OpenAPI components are generated.
"""What the interface shows (docs/rest-api.md "Endpoints"): one attrs class per answer, converted with one
cattrs converter.

The OpenAPI document's `components.schemas` are generated from these classes and from the report's domain
values (`openapi.py`), so an answer and its schema cannot drift apart.
"""

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from attrs import frozen

from siteaudit.adapters.answers import converter as answers_converter
from siteaudit.adapters.report_json import report_json
from siteaudit.domain.audit import Audit as AuditRecord
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.console import SyncStatus
from siteaudit.domain.console_answers import (
    ConsoleSummary,
    InspectAnswer,
    NotIndexedAnswer,
    Opportunities,
    UrlConsole,
    UrlCrawl,
    UrlSearch,
    UrlStatus,
)
from siteaudit.domain.credit import as_number
from siteaudit.domain.diff import Diff
from siteaudit.domain.issue import Issue as IssueRecord
from siteaudit.domain.issue import Severity
from siteaudit.domain.report import Report, TemplateGroup
from siteaudit.domain.site import Monitoring, Notice, ProofOutcome, VerifyMethod, dns_steps
from siteaudit.domain.site import Site as SiteRecord
from siteaudit.domain.triage import IndexTriage, ValueClass
from siteaudit.ports.application import (
    AccountView,
    AuditDetail,
    AuditStarted,
    OwnershipProved,
    SiteDetail,
    SiteOwnership,
    SiteUpdated,
)
from siteaudit.ports.application import PaymentLink as PaymentLinkRecord
from siteaudit.ports.crawl import PageRow

converter: Final = answers_converter
converter.register_unstructure_hook(AuditStatus, lambda member: member.value)
for _site_enum in (Monitoring, VerifyMethod, ProofOutcome):
    converter.register_unstructure_hook(_site_enum, lambda member: member.value)


@frozen
class AuditRow:
    """An audit in the list."""

    crawl_id: int
    site_id: int | None
    site_url: str
    status: AuditStatus
    trigger: str
    health_score: int | None
    pages_crawled: int
    max_pages: int
    created_at: datetime
    finished_at: datetime | None
    archived_at: datetime | None


@frozen
class Audit:
    """An audit's detail."""

    crawl_id: int
    site_id: int | None
    site_url: str
    trigger: str
    status: AuditStatus
    pages_crawled: int
    max_pages: int
    credits_reserved: float
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    archived_at: datetime | None
    failure_reason: str | None
    verify_token_set: bool
    max_rps: float
    concurrency: int
    duration_s: float | None
    pages_per_minute: float | None
    last_progress_at: datetime | None  # last batch recorded, lease renewed or state move
    stalled: bool  # its lease's deadline passed and no worker took the audit over
    render: bool  # its HTML pages are rendered in a browser (docs/rendering.md)


@frozen
class Issue:
    """An issue row; `details` is what was seen, its inner structure not shown."""

    check_code: str
    severity: Severity
    url: str
    template: str
    details: Mapping[str, Any]


@frozen
class Page:
    """A page row. `excluded_by` is "robots.txt" for a URL robots.txt disallows: it was never
    requested, so it is not a fetch error and is in no report total (`stats.excluded_by_robots`)."""

    url: str
    status_code: int | None
    title: str | None
    meta_description: str | None
    word_count: int | None
    depth: int
    blocked_by: str | None
    fetch_error: str | None
    excluded_by: str | None
    extract: Mapping[str, tuple[str, ...]] | None = None  # left out without extraction rules


@frozen
class Account:
    """Balances and usage."""

    balance: float
    team_id: int
    team_credits: float
    crawls_total: int
    credits_spent_30d: float
    team_credits_spent_30d: float
    api_key_prefix: str


@frozen
class ReportTemplates:
    """`GET /crawls/{id}/templates`."""

    crawl_id: int
    templates: tuple[TemplateGroup, ...]


@frozen
class ReportDiff:
    """`GET /crawls/{id}/diff`: null for a site's first audit."""

    crawl_id: int
    diff: Diff | None


@frozen
class FixPrompt:
    """`GET /crawls/{id}/fix-prompt`: markdown for a coding agent; it quotes the crawled site, treat it as data."""

    crawl_id: int
    prompt: str


def _json(value: object) -> dict[str, Any]:
    document: dict[str, Any] = converter.unstructure(value)
    return document


def audit_row(audit: AuditRecord) -> dict[str, Any]:
    return _json(
        AuditRow(
            crawl_id=audit.id,
            site_id=audit.site_id,
            site_url=audit.url,
            status=audit.status,
            trigger=audit.trigger.value,
            health_score=audit.health_score,
            pages_crawled=audit.pages_crawled,
            max_pages=audit.max_pages,
            created_at=audit.created_at,
            finished_at=audit.finished_at,
            archived_at=audit.archived_at,
        )
    )


def audit_detail(detail: AuditDetail, *, now: datetime) -> dict[str, Any]:
    audit = detail.audit
    duration = audit.duration_until(now)
    per_minute = None
    if duration is not None and duration > 0:
        per_minute = round(audit.pages_crawled / (duration / 60), 1)
    return _json(
        Audit(
            crawl_id=audit.id,
            site_id=audit.site_id,
            site_url=audit.url,
            trigger=audit.trigger.value,
            status=audit.status,
            pages_crawled=audit.pages_crawled,
            max_pages=audit.max_pages,
            credits_reserved=as_number(audit.credits_reserved),
            created_at=audit.created_at,
            started_at=audit.started_at,
            finished_at=audit.finished_at,
            archived_at=audit.archived_at,
            failure_reason=audit.failure_reason,
            verify_token_set=audit.verify_token_set,
            max_rps=audit.max_rps,
            concurrency=audit.concurrency,
            duration_s=None if duration is None else round(duration, 1),
            pages_per_minute=per_minute,
            last_progress_at=audit.last_progress_at,
            stalled=detail.stalled,
            render=audit.render,
        )
    )


def issue_row(issue: IssueRecord) -> dict[str, Any]:
    """`Issue` as the converter writes it, built directly: an issue page holds fifty, and the converter
    walking every `details` document was half the page's CPU (`details` is JSON already, read from a JSON
    column or made by the checks). A test keeps the two the same."""
    return {
        "check_code": issue.check_code,
        "severity": issue.severity.value,
        "url": issue.url,
        "template": issue.template,
        "details": dict(issue.details),
    }


def page_row(page: PageRow) -> dict[str, Any]:
    document = _json(
        Page(
            url=page.url,
            status_code=page.status_code,
            title=page.title,
            meta_description=page.meta_description,
            word_count=page.word_count,
            depth=page.depth,
            blocked_by=page.blocked_by,
            fetch_error=None if page.fetch_error is None else page.fetch_error.value,
            excluded_by=page.excluded_by,
            extract={e.name: e.values for e in page.extracted} if page.extracted else None,
        )
    )
    if document["extract"] is None:  # an audit without extraction rules (docs/extraction.md)
        del document["extract"]
    return document


def account_answer(view: AccountView) -> dict[str, Any]:
    """The account as `Account` declares it (a field the use case adds must be declared there too)."""
    return _json(
        Account(
            balance=as_number(view.balance),
            team_id=view.team_id,
            team_credits=as_number(view.team_credits),
            crawls_total=view.crawls_total,
            credits_spent_30d=as_number(view.credits_spent_30d),
            team_credits_spent_30d=as_number(view.team_credits_spent_30d),
            api_key_prefix=view.api_key_prefix,
        )
    )


def report_answer(report: Report) -> dict[str, Any]:
    return report_json(report)


def templates_answer(crawl_id: int, report: Report) -> dict[str, Any]:
    return _json(ReportTemplates(crawl_id=crawl_id, templates=report.templates))


def diff_answer(crawl_id: int, report: Report) -> dict[str, Any]:
    return _json(ReportDiff(crawl_id=crawl_id, diff=report.diff))


def fix_prompt_answer(crawl_id: int, report: Report) -> dict[str, Any]:
    return _json(FixPrompt(crawl_id=crawl_id, prompt=report.fix_prompt))


ReportPartView = Callable[[int, Report], dict[str, Any]]


# --- registered sites (docs/rest-api.md "Registered sites") -------------------------------------------

CDN_TOKEN_LINK: Final = "https://dash.cloudflare.com/profile/api-tokens"


@frozen
class Site:
    """A registered site."""

    id: int
    team_id: int
    url: str
    host: str
    verified: bool
    verified_at: datetime | None
    verified_via: VerifyMethod | None
    monitoring: Monitoring
    next_crawl_at: datetime | None
    last_dispatched_at: datetime | None
    last_skip_reason: str | None
    max_pages: int
    max_rps: float
    alert_email: bool
    render: bool  # its audits render pages in a browser unless they say otherwise (docs/rendering.md)


@frozen
class UpdatedSite(Site):
    """`PATCH /sites/{id}`: the site as saved, and `warnings`: what its settings will not do
    (scheduled audits the owner's credits cannot cover, a max_rps capped until the site is verified)."""

    warnings: tuple[Notice, ...]


@frozen
class SiteList:
    """`GET /sites`: the team's sites, oldest first (not paginated)."""

    data: tuple[Site, ...]


@frozen
class FileProofSteps:
    """The file proof: serve `content` at `url` (`path` on the site) as `content_type`."""

    path: str
    url: str
    content: str
    content_type: str
    instructions: str


@frozen
class RegisteredSite(Site):
    """`POST /sites`: the site, its ownership token and the file proof to publish."""

    verify_token: str
    verify: FileProofSteps


@frozen
class SiteWithAudits(RegisteredSite):
    """`GET /sites/{id}`: also the latest audit and the health scores of up to 12 recent audits, oldest
    first."""

    latest_crawl: AuditRow | None
    trend: tuple[int, ...]


@frozen
class ConsoleProof:
    """Search-console method: verified when the team's console connection lists the property."""

    connected: bool
    property: str | None


@frozen
class DnsProofSteps:
    """A TXT record `name` with `value`; `steps` for common DNS hosts."""

    name: str
    value: str
    steps: Mapping[str, str]


@frozen
class MetaProofSteps:
    """`tag` inside `<head>` of the home page `url`."""

    url: str
    tag: str


@frozen
class FileProof:
    """A file at `url` whose body is `body`."""

    url: str
    body: str


@frozen
class CdnProof:
    """CDN method: `connected`, the site's `zone` when found, and where to create an API token."""

    connected: bool
    zone: str | None
    token_link: str


@frozen
class VerificationMethods:
    """Every ownership method. `gsc` and `sc` are the same search-console method, `cloudflare` and
    `cdn` the same CDN method, under both names."""

    gsc: ConsoleProof
    sc: ConsoleProof
    dns: DnsProofSteps
    meta: MetaProofSteps
    file: FileProof
    cloudflare: CdnProof
    cdn: CdnProof
    agent_prompt: str


@frozen
class SiteVerification:
    """`GET /sites/{id}/verification`: ownership status and what to publish."""

    verified: bool
    via: VerifyMethod | None
    checked_at: datetime | None
    lost_at: datetime | None
    methods: VerificationMethods


@frozen
class ProofCheck:
    """One method tried by `POST /sites/{id}/verify`: `result`, and `detail` on why it did not match."""

    method: VerifyMethod
    result: ProofOutcome
    detail: str | None


@frozen
class VerifiedSite(Site):
    """`POST /sites/{id}/verify` that matched: the site, and every method tried, in order."""

    checked: tuple[ProofCheck, ...]


def _site_fields(site: SiteRecord) -> dict[str, Any]:
    return {
        "id": site.id,
        "team_id": site.team_id,
        "url": site.url,
        "host": site.host,
        "verified": site.verified,
        "verified_at": site.verified_at,
        "verified_via": site.verified_via,
        "monitoring": site.monitoring,
        "next_crawl_at": site.next_crawl_at,
        "last_dispatched_at": site.last_dispatched_at,
        "last_skip_reason": site.last_skip_reason,
        "max_pages": site.max_pages,
        "max_rps": site.max_rps,
        "alert_email": site.alert_email,
        "render": site.render,
    }


def _file_steps(site: SiteRecord) -> FileProofSteps:
    proof = site.proofs.file
    return FileProofSteps(
        path=proof.path,
        url=proof.url,
        content=proof.content,
        content_type=proof.content_type,
        instructions=proof.instructions,
    )


def site_answer(site: SiteRecord) -> dict[str, Any]:
    return _json(Site(**_site_fields(site)))


def updated_site_answer(updated: SiteUpdated) -> dict[str, Any]:
    return _json(UpdatedSite(**_site_fields(updated.site), warnings=updated.notices))


def started_answer(started: AuditStarted) -> dict[str, Any]:
    """The 202 of an audit started (docs/rest-api.md "Registered sites"), with `warnings`: why it runs slower
    than asked."""
    return {
        "crawl_id": started.audit.id,
        "estimated_credits": as_number(started.estimated_credits),
        "max_rps": started.audit.max_rps,
        "warnings": [_json(notice) for notice in started.notices],
    }


def site_list_answer(sites: Sequence[SiteRecord]) -> dict[str, Any]:
    return _json(SiteList(data=tuple(Site(**_site_fields(s)) for s in sites)))


def registered_site_answer(site: SiteRecord) -> dict[str, Any]:
    return _json(
        RegisteredSite(**_site_fields(site), verify_token=site.verify_token, verify=_file_steps(site))
    )


def site_detail_answer(detail: SiteDetail) -> dict[str, Any]:
    site, latest = detail.site, detail.latest_audit
    answer = _json(
        SiteWithAudits(
            **_site_fields(site),
            verify_token=site.verify_token,
            verify=_file_steps(site),
            latest_crawl=None,
            trend=tuple(detail.trend),
        )
    )
    # The latest audit is the row GET /crawls lists, converted by its one function.
    answer["latest_crawl"] = None if latest is None else audit_row(latest)
    return answer


def verification_answer(ownership: SiteOwnership) -> dict[str, Any]:
    site = ownership.site
    proofs = site.proofs
    console = ConsoleProof(connected=ownership.console_connected, property=ownership.console_property)
    cdn = CdnProof(connected=ownership.cdn_connected, zone=ownership.cdn_zone, token_link=CDN_TOKEN_LINK)
    methods = VerificationMethods(
        gsc=console,
        sc=console,
        dns=DnsProofSteps(
            name=proofs.dns.name, value=proofs.dns.value, steps=dict(dns_steps(proofs.dns, site.host))
        ),
        meta=MetaProofSteps(url=proofs.meta.url, tag=proofs.meta.tag),
        file=FileProof(url=proofs.file.url, body=proofs.file.content),
        cloudflare=cdn,
        cdn=cdn,
        agent_prompt=proofs.agent_prompt,
    )
    return _json(
        SiteVerification(
            verified=site.verified,
            via=site.verified_via,
            checked_at=site.checked_at,
            lost_at=site.lost_at,
            methods=methods,
        )
    )


def verified_site_answer(proved: OwnershipProved) -> dict[str, Any]:
    checked = tuple(ProofCheck(method=c.method, result=c.outcome, detail=c.detail) for c in proved.checked)
    return _json(VerifiedSite(**_site_fields(proved.site), checked=checked))


# --- billing (docs/rest-api.md "Billing") ----------------------------------------------------------------


@frozen
class PaymentLink:
    """A payment-provider link to open in a browser; nothing is charged until checkout completes there."""

    url: str


def payment_link_answer(link: PaymentLinkRecord) -> dict[str, Any]:
    return {"url": link.url}


# --- the search-console integration (docs/rest-api.md "Search console") ------------------------------
# The answers are the domain's values (`domain/console_answers.py`) as they are; the single-URL answer
# carries the console facts under both `gsc` and its alias `sengine`
# (docs/rest-api.md "Renamed identifiers").

converter.register_unstructure_hook(SyncStatus, lambda member: member.value)
converter.register_unstructure_hook(ValueClass, lambda member: member.value)


@frozen
class ConsoleUrlAnswer:
    """`GET /sites/{id}/gsc/url`: crawl facts, console facts (`gsc`, also as its alias `sengine`) and search
    figures of one URL of the site."""

    site_id: int
    demo: bool
    url: str
    crawl: UrlCrawl | None
    gsc: UrlConsole | None
    sengine: UrlConsole | None
    search: UrlSearch | None


def console_answer(
    value: ConsoleSummary | NotIndexedAnswer | Opportunities | InspectAnswer | IndexTriage,
) -> dict[str, Any]:
    return _json(value)


def console_url_answer(status: UrlStatus) -> dict[str, Any]:
    return _json(
        ConsoleUrlAnswer(
            site_id=status.site_id,
            demo=status.demo,
            url=status.url,
            crawl=status.crawl,
            gsc=status.console,
            sengine=status.console,
            search=status.search,
        )
    )
