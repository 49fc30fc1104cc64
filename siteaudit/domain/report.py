"""The report of an audit (SPEC 2.4): one frozen value, built by `tally.ReportTally` at finalisation.

Stored, served and printed as it is: each edge (the SQL store, REST, the CLI's JSON) converts it once,
with the field names and order below being the JSON's. `Diff` and `NewIssue` are in `domain/diff.py`.

Decisions the spec leaves open are documented with the tally that computes them (`domain/tally.py`);
`coverage_warning` is here: it appears when more than 20% of the crawled URLs were blocked.
"""

from collections.abc import Mapping, Sequence
from typing import Final

from attrs import frozen

from siteaudit.domain.diff import Diff, DiffBasis
from siteaudit.domain.identity import USER_AGENT, VERIFY_HEADER
from siteaudit.domain.issue import Severity

COVERAGE_WARNING_RATIO: Final = 0.2


@frozen
class Totals:
    """Every crawled URL in exactly one bucket; `pages` is their sum. URLs robots.txt disallows were never
    requested: they are in none (`Stats.excluded_by_robots` counts them)."""

    pages: int
    ok: int
    redirects: int
    broken: int
    fetch_errors: int
    blocked: int


@frozen
class CheckSummary:
    """One row of `issues`: a check, its most severe severity, its issues and the distinct pages they are on."""

    check_code: str
    severity: Severity
    count: int
    pages: int
    fix: str


@frozen
class IssueCounts:
    """Issues by their own severity."""

    error: int
    warning: int
    notice: int


@frozen
class Blocked:
    """Pages a firewall challenged: how many, by provider and first path segment, a few samples."""

    count: int
    skipped: int
    providers: Mapping[str, int]
    by_section: Mapping[str, int]
    sample_urls: tuple[str, ...]


@frozen
class CoverageWarning:
    """Too much of the site was blocked for the score to speak for all of it."""

    code: str
    blocked_ratio: float
    message: str
    docs: str


@frozen
class TemplateIssue:
    """A check within one template group."""

    check_code: str
    severity: Severity
    count: int
    pages: int
    template_wide: bool
    sample_urls: tuple[str, ...]


@frozen
class TemplateGroup:
    """The issues of the pages sharing one URL template."""

    template: str
    pages: int
    issues: tuple[TemplateIssue, ...]


@frozen
class Timings:
    """How long the audit took: crawling (None while unknown), and finalisation's steps, in seconds."""

    crawl_s: float | None
    finalize_s: float
    site_checks_s: float
    templates_s: float
    pages_crawled: int


@frozen
class ScoreInputs:
    pages_with_errors: int
    audited_pages: int


@frozen
class ScoreStats:
    """The health score with the formula and inputs that gave it."""

    value: int
    formula: str
    inputs: ScoreInputs


@frozen
class TemplateStats:
    """How many templates there were, how many groups the report shows, and the template-wide rule."""

    total: int
    shown: int
    template_wide_rule: str


@frozen
class Stats:
    """How the report was made. `excluded_by_robots` counts the URLs robots.txt disallows (never requested,
    so in no `totals` bucket; 0 in reports stored before it existed). `diff_basis` is None (and left out
    of the JSON) for a first audit."""

    thresholds: Mapping[str, int | float]
    timings: Timings
    score: ScoreStats
    templates: TemplateStats
    excluded_by_robots: int = 0
    diff_basis: DiffBasis | None = None


@frozen
class Report:
    """An audit's report (SPEC 2.4)."""

    crawl_id: int
    health_score: int
    partial: bool
    totals: Totals
    issues: tuple[CheckSummary, ...]
    issue_counts: IssueCounts
    blocked: Blocked
    coverage_warning: CoverageWarning | None
    stats: Stats
    templates: tuple[TemplateGroup, ...]
    diff: Diff | None
    fix_prompt: str


@frozen
class AllowListAdvice:
    """How a site owner lets the auditor through a firewall, quoted in the coverage warning."""

    user_agent: str = USER_AGENT
    token_header: str = VERIFY_HEADER
    docs_url: str = "https://siteaudit.example/docs/firewalls"


def coverage_warning(
    *, blocked: int, pages: int, providers: Sequence[str], advice: AllowListAdvice
) -> CoverageWarning | None:
    """The `blocked_by_firewall` warning when more than 20% of the crawled URLs were blocked, else None."""
    if pages <= 0 or blocked / pages <= COVERAGE_WARNING_RATIO:
        return None
    ratio = blocked / pages
    by = f" ({', '.join(providers)})" if providers else ""
    message = (
        f"{ratio:.0%} of the crawled pages answered with a firewall or bot challenge{by}, so they could "
        "not be audited and the score covers only the rest of the site. Search engines may still reach "
        "these pages: firewalls often let verified search-engine crawlers through while challenging "
        "other clients. To audit the whole site, allow-list the auditor: start the audit with a "
        f"verify_token (it is sent in the {advice.token_header} request header, so a firewall rule can "
        f"let requests carrying it through), or allow the user agent {advice.user_agent!r}."
    )
    return CoverageWarning(
        code="blocked_by_firewall", blocked_ratio=round(ratio, 4), message=message, docs=advice.docs_url
    )
