"""The report of an audit (docs/scoring.md): one frozen value, built by `tally.ReportTally` at finalisation.

Stored, served and printed as it is: each edge (the SQL store, REST, the CLI's JSON) converts it once,
with the field names and order below being the JSON's. `Diff` and `NewIssue` are in `domain/diff.py`.

Decisions the REST contract leaves open are documented with the tally that computes them (`domain/tally.py`);
`coverage_warning` is here (`docs/scoring.md`): it appears when more than 20% of the crawled pages were
blocked (`blocked_by_firewall`), and on every audit without a score, saying why no HTML page was audited
(`site_unreachable`, `robots_txt_unreachable`, `robots_txt_disallow_all`, `blocked_by_firewall`,
`no_html_pages`).
"""

from collections.abc import Mapping, Sequence
from typing import Final

from attrs import frozen

from siteaudit.domain.diff import Diff, DiffBasis
from siteaudit.domain.facts import FetchError, RobotsFacts
from siteaudit.domain.identity import USER_AGENT, VERIFY_HEADER
from siteaudit.domain.issue import Severity

COVERAGE_WARNING_RATIO: Final = 0.2

# `coverage_warning.code` values (`docs/scoring.md`).
BLOCKED_BY_FIREWALL: Final = "blocked_by_firewall"
SITE_UNREACHABLE: Final = "site_unreachable"
ROBOTS_TXT_UNREACHABLE: Final = "robots_txt_unreachable"
ROBOTS_TXT_DISALLOW_ALL: Final = "robots_txt_disallow_all"
NO_HTML_PAGES: Final = "no_html_pages"
COVERAGE_CODES: Final = (
    BLOCKED_BY_FIREWALL,
    SITE_UNREACHABLE,
    ROBOTS_TXT_UNREACHABLE,
    ROBOTS_TXT_DISALLOW_ALL,
    NO_HTML_PAGES,
)

# Fetch errors that mean the host itself could not be reached (no connection at all), as opposed to a
# server that was reached and did not answer in time.
_NO_CONNECTION: Final = frozenset({FetchError.DNS, FetchError.CONNECT, FetchError.TLS, FetchError.REFUSED})


@frozen
class Totals:
    """Every crawled page in exactly one bucket; `pages` is their sum, the audit's `pages_crawled`. URLs
    robots.txt disallows were never requested: they are in none (`Stats.excluded_by_robots` counts them).
    Resources (images, external link targets, non-HTML answers) are not pages: `Stats.resources`."""

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
    """The score does not speak for the whole site: too much of it was blocked, or no HTML page at all
    was audited (then the score is null). `blocked_ratio` is always the share of the crawled pages a
    firewall challenged (0.0 when none was, or no page was crawled)."""

    code: str
    blocked_ratio: float
    message: str
    docs: str


@frozen
class Resources:
    """URLs fetched to be checked, not audited as pages: images, external link targets, and site URLs
    that answered 2xx with something other than HTML (a PDF, JSON, a feed). Never in `pages_crawled`,
    never billed; in the same buckets as `Totals` (`checked` is their sum)."""

    checked: int = 0
    ok: int = 0
    redirects: int = 0
    broken: int = 0
    fetch_errors: int = 0
    blocked: int = 0


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
    """`html_pages`: the audited pages that answered with HTML; with none there is no score (0 in reports
    stored before it existed)."""

    pages_with_errors: int
    audited_pages: int
    html_pages: int = 0


@frozen
class ScoreStats:
    """The health score with the formula and inputs that gave it (`value` None: no score)."""

    value: int | None
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
    so in no `totals` bucket; 0 in reports stored before it existed). `resources` counts the URLs fetched
    as resources, not pages (zeros in reports stored before it existed, whose `totals` counted them).
    `diff_basis` is None (and left out of the JSON) for a first audit."""

    thresholds: Mapping[str, int | float]
    timings: Timings
    score: ScoreStats
    templates: TemplateStats
    excluded_by_robots: int = 0
    resources: Resources = Resources()
    diff_basis: DiffBasis | None = None


@frozen
class Report:
    """An audit's report. `health_score` is None when no HTML page was audited
    (`coverage_warning` says why)."""

    crawl_id: int
    health_score: int | None
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


@frozen
class Reach:
    """What an audit reached, for the warning of an audit without a score: its audited HTML pages, its
    crawled pages by answer, the URLs robots.txt kept it from, its resources, and robots.txt's answer."""

    html_pages: int
    pages: int = 0
    fetch_errors: int = 0
    blocked: int = 0
    excluded_by_robots: int = 0
    resources: Resources = Resources()
    robots: RobotsFacts | None = None


def coverage_warning(
    *,
    blocked: int,
    pages: int,
    providers: Sequence[str],
    advice: AllowListAdvice,
    reach: Reach | None = None,
) -> CoverageWarning | None:
    """The report's warning: when no HTML page was audited (`reach.html_pages` 0) the reason there is no
    score; else `blocked_by_firewall` when more than 20% of the crawled pages were blocked; else None."""
    if reach is not None and reach.html_pages == 0:
        return _no_score_warning(reach, providers=providers, advice=advice)
    if pages <= 0 or blocked / pages <= COVERAGE_WARNING_RATIO:
        return None
    return _firewall_warning(blocked / pages, providers, advice)


def _firewall_warning(ratio: float, providers: Sequence[str], advice: AllowListAdvice) -> CoverageWarning:
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
        code=BLOCKED_BY_FIREWALL, blocked_ratio=round(ratio, 4), message=message, docs=advice.docs_url
    )


_NO_SCORE: Final = "No HTML page could be audited, so there is no health score."


def _no_score_warning(reach: Reach, *, providers: Sequence[str], advice: AllowListAdvice) -> CoverageWarning:
    """Why an audit audited no HTML page, most fundamental reason first (`docs/scoring.md`)."""
    ratio = round(reach.blocked / reach.pages, 4) if reach.pages > 0 else 0.0
    robots = reach.robots
    answered = reach.pages - reach.fetch_errors - reach.blocked
    resources_answered = reach.resources.checked - reach.resources.fetch_errors
    no_answer = answered <= 0 and reach.blocked == 0 and resources_answered <= 0
    robots_error = None if robots is None else robots.fetch_error
    if no_answer and (robots_error in _NO_CONNECTION or reach.fetch_errors > 0):
        why = f" ({robots_error.value})" if robots_error is not None else ""
        message = (
            f"The site could not be reached{why}: no request to it got an answer (the host does not "
            f"resolve, refuses connections or does not answer). {_NO_SCORE} Check that the address is "
            "right and the server is up, then audit again."
        )
        return _warning(SITE_UNREACHABLE, ratio, message, advice)
    if robots is not None and (
        robots.fetch_error is not None
        or (robots.status_code is not None and (robots.status_code >= 500 or robots.status_code == 429))
    ):
        answer = (
            robots.fetch_error.value if robots.fetch_error is not None else f"status {robots.status_code}"
        )
        message = (
            f"robots.txt could not be read ({answer}). A crawler that cannot read robots.txt must treat the "
            "whole site as disallowed (RFC 9309), so no page was requested, and search engines pause "
            f"crawling the site the same way. {_NO_SCORE} Make /robots.txt answer quickly with 200 (or "
            "404 if you have none), then audit again."
        )
        return _warning(ROBOTS_TXT_UNREACHABLE, ratio, message, advice)
    if reach.blocked > 0:
        return _firewall_warning(ratio, providers, advice)
    if reach.pages == 0 and reach.excluded_by_robots > 0:
        message = (
            f"robots.txt disallows every URL the audit found for the auditor, so no page was requested. "
            f"{_NO_SCORE} To audit the site, allow the user agent {advice.user_agent!r} in robots.txt."
        )
        return _warning(ROBOTS_TXT_DISALLOW_ALL, ratio, message, advice)
    res = reach.resources
    message = (
        f"No URL of the site answered with an HTML page: {reach.pages} crawled pages "
        f"({reach.fetch_errors} without an answer) and {res.checked} resources ({res.ok} answered 2xx "
        "with something other than HTML, such as JSON, a PDF or an image). The audit's checks read HTML "
        f"pages, so {_NO_SCORE[0].lower()}{_NO_SCORE[1:]} Check that the start URL serves the site's "
        "HTML (a single-page app should serve HTML at its routes), then audit again."
    )
    return _warning(NO_HTML_PAGES, ratio, message, advice)


def _warning(code: str, ratio: float, message: str, advice: AllowListAdvice) -> CoverageWarning:
    return CoverageWarning(code=code, blocked_ratio=ratio, message=message, docs=advice.docs_url)
