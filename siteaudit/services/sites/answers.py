"""What the site use cases answer (docs/rest-api.md "Registered sites"): one attrs class per answer, shown
as JSON by every door (`converter.unstructure(result)`); the HTTP client reads it back into the class,
and the OpenAPI components are generated from these classes. Built here from the domain's records."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final, TypeVar

import attrs
from attrs import field, frozen

from siteaudit.domain.extraction import ExtractionRule
from siteaudit.domain.scope import QueryParams
from siteaudit.domain.site import Monitoring, Notice, ProofOutcome, VerifyMethod, dns_steps
from siteaudit.domain.site import ProofCheck as ProofCheckRecord
from siteaudit.domain.site import Site as SiteRecord
from siteaudit.ports.usecases import copy_named
from siteaudit.services.audits.answers import AuditRow

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
    # What its audits keep and how they treat queries, unless an audit says otherwise (docs/audits.md).
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    query_params: QueryParams
    keep_params: tuple[str, ...]
    extract: tuple[ExtractionRule, ...]  # its audits' extraction rules (docs/extraction.md)


Shown = TypeVar("Shown", bound=Site)


def site_answer(shown: type[Shown], site: SiteRecord, **more: Any) -> Shown:
    """`shown` (`Site` or an answer extending it) from the domain's site: its fields by their names, its
    scope rules' (docs/audits.md), whether it is verified, and `more`."""
    return copy_named(shown, site, verified=site.verified, **attrs.asdict(site.rules, recurse=False), **more)


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

    @classmethod
    def of(cls, site: SiteRecord) -> "FileProofSteps":
        return copy_named(cls, site.proofs.file)


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
class SiteDeleted:
    """`DELETE /sites/{id}` answers 204 without a body; the tool says the site is gone."""

    deleted: bool = True
    site_id: int = field(kw_only=True)


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

    @classmethod
    def of(
        cls,
        site: SiteRecord,
        *,
        console_connected: bool,
        console_property: str | None,
        cdn_connected: bool = False,
        cdn_zone: str | None = None,
    ) -> "SiteVerification":
        proofs = site.proofs
        console = ConsoleProof(connected=console_connected, property=console_property)
        cdn = CdnProof(connected=cdn_connected, zone=cdn_zone, token_link=CDN_TOKEN_LINK)
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
        # checked_at and lost_at are the site's own.
        return copy_named(cls, site, verified=site.verified, via=site.verified_via, methods=methods)


@frozen
class ProofCheck:
    """One method tried by `POST /sites/{id}/verify`: `result`, and `detail` on why it did not match."""

    method: VerifyMethod
    result: ProofOutcome
    detail: str | None

    @classmethod
    def of(cls, check: ProofCheckRecord) -> "ProofCheck":
        return cls(method=check.method, result=check.outcome, detail=check.detail)


@frozen
class VerifiedSite(Site):
    """`POST /sites/{id}/verify` that matched: the site, and every method tried, in order."""

    checked: tuple[ProofCheck, ...]
