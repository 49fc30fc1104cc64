"""The health score (docs/scoring.md): the share of audited HTML pages without an error-level issue.

`score = 100 × (1 − pages with at least one error-level issue / audited HTML pages)`, rounded half up to
an integer. Audited HTML pages are the crawled URLs that were neither blocked by a firewall, nor
redirects, nor successful non-HTML resources (images, PDFs...): a URL that answered 4xx/5xx or gave no
response at all is an audited page that failed, so broken sites do not score well by having few HTML
pages. `bot_challenge` findings never count as errors here (their pages are blocked and already out of
the denominator).

An audit that audited no HTML page (the site did not answer, robots.txt could not be read, every
answer was JSON or an image, every page was blocked) has no score: `None`, the report's
`health_score: null`, never a 100 that reads as health. The report's `coverage_warning` says why
(`docs/scoring.md`).
"""

from typing import Final

from attrs import frozen

from siteaudit.domain.issue import Severity

FORMULA: Final = "round(100 * (1 - pages_with_errors / audited_pages)); null when no audited page is HTML"

# Findings that say "we could not look", not "the page is broken".
NOT_SCORED: Final = frozenset({"bot_challenge"})


def counts_against_score(check_code: str, severity: Severity | str) -> bool:
    """Whether an issue makes its page a "page with an error" for the score."""
    return severity == Severity.ERROR and check_code not in NOT_SCORED


def is_audited_page(
    *, status_code: int | None, is_html: bool, redirected: bool, blocked: bool, fetch_failed: bool
) -> bool:
    """Whether a crawled URL is in the score's denominator (see the module documentation)."""
    if blocked or redirected:
        return False
    if fetch_failed or status_code is None:
        return True
    if 300 <= status_code < 400 and status_code != 304:
        # 304 Not Modified reuses the previous audit's facts of the page: audited like a 200.
        return False
    return is_html or status_code >= 400


@frozen
class HealthScore:
    """The score with the figures it came from, so a reader can recompute it; `score` None: no HTML page
    was audited, there is nothing to score."""

    score: int | None
    pages_with_errors: int
    audited_pages: int
    html_pages: int


def health_score(*, pages_with_errors: int, audited_pages: int, html_pages: int | None = None) -> HealthScore:
    """The health score; `pages_with_errors` is clamped to 0..audited_pages. `html_pages` is how many of
    the audited pages answered with HTML (all of them when not given); with none the score is None."""
    if audited_pages < 0:
        raise ValueError("audited_pages cannot be negative")
    html = audited_pages if html_pages is None else min(max(html_pages, 0), audited_pages)
    errors = min(max(pages_with_errors, 0), audited_pages)
    if html == 0:
        return HealthScore(score=None, pages_with_errors=errors, audited_pages=audited_pages, html_pages=0)
    # Integer half-up rounding: float and banker's rounding would make 62.5 a 62 on some inputs.
    score = (200 * (audited_pages - errors) + audited_pages) // (2 * audited_pages)
    return HealthScore(score=score, pages_with_errors=errors, audited_pages=audited_pages, html_pages=html)
