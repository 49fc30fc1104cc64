# Over 400 lines: eight declarations, each mostly its inputs' bounds and its doors' texts; the handlers are in site.py.
"""The site use cases (docs/rest-api.md "Registered sites"), each declared once: its inputs with their
bounds, its result, and how `/v1` and the tools offer it. Every door is derived from these
(docs/architecture.md, "Adding a use case"); the handlers are in `site.py`. Checking ownership has a
stricter limit of 10 requests a minute per key, on top of the shared 60 (docs/rest-api.md "Errors and
limits")."""

from typing import Final

from attrs import field, frozen

from siteaudit.domain.audit import AuditTrigger
from siteaudit.domain.error import ErrorCode
from siteaudit.domain.extraction import ExtractionRule
from siteaudit.domain.ids import SiteId
from siteaudit.domain.scope import (
    QueryParams,
)
from siteaudit.domain.site import (
    MAX_PAGES_CEILING,
    MAX_RPS,
    MAX_URL_LENGTH,
    MIN_RPS,
    VERIFY_METHOD_NAMES,
    Monitoring,
    VerifyMethod,
)
from siteaudit.ports.ratelimit import Limit
from siteaudit.ports.usecases import (
    BODY_ERRORS,
    CHANGES,
    DESTRUCTIVE,
    MAKES,
    QUERY_ERRORS,
    REACHES_OUT,
    SITE_ID,
    Http,
    Leads,
    Tool,
    UseCase,
    body,
    lookup,
)
from siteaudit.services.audits.answers import AuditStarted
from siteaudit.services.audits.usecases import CRAWL_LINKS, LISTED_ONLY, extraction_rules, scope, start_tool
from siteaudit.services.sites import doors
from siteaudit.services.sites.answers import (
    RegisteredSite,
    SiteDeleted,
    SiteList,
    SiteVerification,
    SiteWithAudits,
    UpdatedSite,
    VerifiedSite,
)

VERIFY_LIMIT: Final = ("verify", Limit(10, 60.0))
_PLAN_PAGES: Final = "at most the plan's per-audit limit (403 plan_limit_max_pages)"


# Where a registered site's id (`id`) leads: to each operation taking it with a `link` (below; an audit's
# `crawl_id`, CRAWL_LINKS, in services/audits/usecases.py). Clients (and stateful fuzzers) follow these.
SITE_LINKS: Final = (Leads("site_id", source="id"),)


_SCOPE: Final = scope(itemwise=False)
MAX_PAGES_TEXT: Final = "Page cap (default 10,000, capped by the plan); over 500 needs a verified site."


@frozen
class ListSites(UseCase[SiteList]):
    """The team's sites, oldest first."""

    http = Http(
        "GET",
        "/v1/sites",
        "listSites",
        "The team's registered sites",
        errors=QUERY_ERRORS,
    )
    tool = Tool(
        "list_sites",
        "Registered sites",
        "The team's registered sites: ownership (verified), monitoring, audit settings.",
        doors.sites_text,
        after="get_fix_prompt",
    )


@frozen
class RegisterSite(UseCase[RegisteredSite]):
    """A new unverified site with a fresh token (max_pages 10,000 capped by the plan and max_rps 2 when
    not given). Raises InvalidUrl (also for a host that is not public), ValidationFailed,
    PlanLimitMaxPages, PlanLimitSites or SiteExists."""

    url: str = field(
        metadata=body(
            "The site's URL, http or https, a public address.",
            doc="http or https, a public address; others answer 422 invalid_url",
            min_length=1,
            max_length=MAX_URL_LENGTH,
            strict=True,
            format="uri",
        )
    )
    max_pages: int | None = field(
        default=None,
        metadata=body(
            "Page cap of its audits (default 10,000 capped by the plan).",
            doc=_PLAN_PAGES,
            low=1,
            high=MAX_PAGES_CEILING,
        ),
    )
    max_rps: float | None = field(
        default=None,
        metadata=body(
            "Requests a second of its audits (default 2).",
            low=MIN_RPS,
            high=MAX_RPS,
            shown_default=2,
        ),
    )
    alert_email: bool = field(
        default=True, metadata=body("Mail the team owner when a scheduled audit gets worse.")
    )

    http = Http(
        "POST",
        "/v1/sites",
        "registerSite",
        "Register a site",
        errors=(
            ErrorCode.PLAN_LIMIT_SITES,
            ErrorCode.PLAN_LIMIT_MAX_PAGES,
            ErrorCode.SITE_EXISTS,
            ErrorCode.INVALID_URL,
            *BODY_ERRORS,
        ),
        status=201,
        examples=({"url": "https://retro-clock.example/", "max_pages": 2_000, "max_rps": 2},),
        links=SITE_LINKS,
    )
    tool = Tool(
        "register_site",
        "Register a site",
        (
            "Register a website to prove ownership (needed past 500 pages, for speed and monitoring). "
            "Then get_site_verification."
        ),
        doors.registered_text,
        **MAKES,
        after="list_sites",
    )


@frozen
class GetSite(UseCase[SiteWithAudits]):
    """The site with its latest audit (any status) and the health scores of up to 12 of its recent
    audits, oldest first. Raises NotFound."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = lookup(
        "/v1/sites/{site_id}",
        "getSite",
        "A site with its token, latest audit and health trend",
        link="the site with its latest audit and trend",
    )
    tool = Tool(
        "get_site",
        "A registered site",
        "One registered site: ownership token, file proof, latest audit, recent health scores.",
        doors.site_text,
        after="register_site",
    )


@frozen
class UpdateSite(UseCase[UpdatedSite]):
    """The site saved with the given settings (None leaves one as it is), and what it warns about
    (`Site.notices`). Raises NotFound, ValidationFailed, PlanLimitMaxPages, PlanLimitMonitoring or
    SiteNotVerified."""

    site_id: SiteId = field(metadata=SITE_ID)
    monitoring: Monitoring | None = field(
        default=None,
        metadata=body("Scheduled audits.", max_length=10, named=True),
    )
    max_pages: int | None = field(
        default=None,
        metadata=body("Page cap of its audits.", doc=_PLAN_PAGES, low=1, high=MAX_PAGES_CEILING),
    )
    max_rps: float | None = field(
        default=None, metadata=body("Requests a second.", low=MIN_RPS, high=MAX_RPS)
    )
    alert_email: bool | None = field(
        default=None, metadata=body("Mail the team owner when a scheduled audit gets worse.")
    )
    render: bool | None = field(
        default=None,
        metadata=body(
            "Its audits render JavaScript (5 credits a page instead of 1).",
            doc="the site's audits render pages in a browser unless they say otherwise",
        ),
    )
    include: tuple[str, ...] | None = field(default=None, metadata=_SCOPE.include)
    exclude: tuple[str, ...] | None = field(default=None, metadata=_SCOPE.exclude)
    query_params: QueryParams | None = field(default=None, metadata=_SCOPE.query_params)
    keep_params: tuple[str, ...] | None = field(default=None, metadata=_SCOPE.keep_params)
    extract: tuple[ExtractionRule, ...] | None = field(
        default=None,
        metadata=extraction_rules(
            "up to 20 extraction rules its audits read (docs/extraction.md); [] removes them"
        ),
    )

    http = Http(
        "PATCH",
        "/v1/sites/{site_id}",
        "updateSite",
        "Change a site's monitoring and saved audit settings",
        errors=(
            ErrorCode.PLAN_LIMIT_MAX_PAGES,
            ErrorCode.PLAN_LIMIT_MONITORING,
            ErrorCode.NOT_FOUND,
            ErrorCode.CONFLICT,
            ErrorCode.SITE_NOT_VERIFIED,
            *BODY_ERRORS,
        ),
        link="change its monitoring and settings",
    )
    tool = Tool(
        "update_site",
        "Change a site's settings",
        (
            "Change a site's monitoring (each scheduled audit COSTS CREDITS, team owner's; needs a "
            "verified site), page cap, speed or alert mail; only given fields change."
        ),
        doors.updated_text,
        **CHANGES,
        after="get_site",
    )


@frozen
class DeleteSite(UseCase[SiteDeleted]):
    """The site goes; its audits stay, listed with their site_id. Raises NotFound."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = Http(
        "DELETE",
        "/v1/sites/{site_id}",
        "deleteSite",
        "Delete a site (its audits stay)",
        errors=(ErrorCode.NOT_FOUND,),
        status=204,
        answer="Deleted",
        link="delete the site",
    )
    tool = Tool(
        "delete_site",
        "Delete a site",
        "Delete a registered site and its schedule for good (its audits stay); registering it again "
        "starts unverified.",
        doors.deleted_text,
        **DESTRUCTIVE,
        after="update_site",
    )


@frozen
class GetSiteVerification(UseCase[SiteVerification]):
    """The site's ownership status and every proof to publish. Raises NotFound."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = lookup(
        "/v1/sites/{site_id}/verification",
        "getSiteVerification",
        "Ownership status and the proofs to publish",
        link="what to publish to prove ownership",
    )
    tool = Tool(
        "get_site_verification",
        "How to prove ownership",
        "Ways to prove a site's ownership (DNS TXT, meta tag, file, search console, CDN) and what to "
        "publish. Publish one, then verify_site.",
        doors.verification_text,
        after="delete_site",
    )


@frozen
class VerifySite(UseCase[VerifiedSite]):
    """Check the asked ownership proof, or each in turn, and mark the site verified at the first match.
    Raises NotFound or VerificationFailed (422, naming what to publish)."""

    site_id: SiteId = field(metadata=SITE_ID)
    method: VerifyMethod | None = field(
        default=None,
        metadata=body(
            "Only this method.",
            doc="one method; none: gsc, dns, meta, file in that order (sc is gsc, cdn is cloudflare)",
            max_length=20,
            choices=VERIFY_METHOD_NAMES,
        ),
    )

    http = Http(
        "POST",
        "/v1/sites/{site_id}/verify",
        "verifySite",
        "Check ownership (10 requests a minute per key besides the shared limit)",
        errors=(ErrorCode.NOT_FOUND, ErrorCode.CONFLICT, ErrorCode.VERIFICATION_FAILED, *BODY_ERRORS),
        limit=VERIFY_LIMIT,
        link="check ownership",
    )
    tool = Tool(
        "verify_site",
        "Check ownership",
        "Check the published ownership proof now; 10 a minute. verification_failed says what to publish.",
        doors.verified_text,
        **REACHES_OUT,
        after="get_site_verification",
    )


@frozen
class CrawlSite(UseCase[AuditStarted]):
    """Audit the site with its saved settings: max_rps capped at the site's and at 3 while unverified,
    charged to the team owner, no webhook. Raises NotFound, InsufficientCredits, PlanLimitMaxPages,
    SiteNotVerified, InvalidUrl or DispatchFailed."""

    excludes = LISTED_ONLY

    site_id: SiteId = field(metadata=SITE_ID)
    max_pages: int | None = field(
        default=None,
        metadata=body(
            MAX_PAGES_TEXT,
            doc="above 500 on an unverified site: 409 site_not_verified",
            low=1,
            high=MAX_PAGES_CEILING,
        ),
    )
    max_rps: float | None = field(
        default=None,
        metadata=body(
            "Requests a second, at most the site's setting (3 while unverified).",
            doc="capped at the site's max_rps, and at 3 while unverified",
            low=MIN_RPS,
            high=MAX_RPS,
        ),
    )
    trigger: AuditTrigger = field(
        default=AuditTrigger.API,
        metadata=body(
            "ci labels a CI run.",
            max_length=10,
            choices=(AuditTrigger.API.value, AuditTrigger.CI.value),
        ),
    )
    render: bool | None = field(
        default=None,
        metadata=body(
            "Render JavaScript: 5 credits a page instead of 1 (default: the site's setting).",
            doc="render each HTML page in a browser (5 credits a page instead of 1); default: the site's "
            "setting",
        ),
    )
    urls: tuple[str, ...] | None = field(
        default=None,
        metadata=_SCOPE.urls(
            "Audit exactly these URLs of the site, nothing followed.",
            "a list audit (docs/audits.md): exactly these URLs of the site, nothing followed; "
            "duplicates removed, at most max_pages",
        ),
    )
    sitemap_only: bool = field(default=False, metadata=_SCOPE.sitemap_only)
    include: tuple[str, ...] | None = field(default=None, metadata=_SCOPE.include)
    exclude: tuple[str, ...] | None = field(default=None, metadata=_SCOPE.exclude)
    query_params: QueryParams | None = field(default=None, metadata=_SCOPE.query_params)
    keep_params: tuple[str, ...] | None = field(default=None, metadata=_SCOPE.keep_params)
    extract: tuple[ExtractionRule, ...] | None = field(
        default=None,
        metadata=extraction_rules(
            "extraction rules (docs/extraction.md) instead of the site's saved ones; [] reads none"
        ),
    )

    http = Http(
        "POST",
        "/v1/sites/{site_id}/crawls",
        "startSiteCrawl",
        "Audit a registered site with its saved settings (charged to the team owner)",
        errors=(
            ErrorCode.INSUFFICIENT_CREDITS,
            ErrorCode.PLAN_LIMIT_MAX_PAGES,
            ErrorCode.NOT_FOUND,
            ErrorCode.SITE_NOT_VERIFIED,
            ErrorCode.INVALID_URL,
            *BODY_ERRORS,
            ErrorCode.DISPATCH_FAILED,
        ),
        status=202,
        links=CRAWL_LINKS,
        link="audit the site",
    )
    tool = start_tool(
        "start_site_audit",
        "Audit a registered site",
        "Audit a registered site with its settings; answers crawl_id. COSTS CREDITS (team owner's): "
        "1 a page up to max_pages, unused refunded. Then wait_for_audit.",
        after="verify_site",
    )


# In the order the doors list them (the tool list, the remote CLI's commands).
USE_CASES: Final = (
    ListSites,
    RegisterSite,
    GetSite,
    UpdateSite,
    DeleteSite,
    GetSiteVerification,
    VerifySite,
    CrawlSite,
)
