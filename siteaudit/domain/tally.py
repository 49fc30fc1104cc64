"""The report of an audit (docs/scoring.md), built from counters fed one page and one issue at a time.
(Over 400 lines: the counters, and the report built from them, documented by one list of decisions.)

A `ReportTally` is filled while the caller reads the audit's page and issue rows (in any order, any
number of them) and keeps aggregates only: counters per check and per (template, check), a few sample
URLs each, the set of audited URLs and of URLs with an error, and the issue identity keys for the diff.
`build()` turns them into the `Report` value (`domain/report.py`).

Decisions the REST contract leaves open:

- Pages and resources (`docs/scoring.md`): a URL fetched as a resource (an image, an external link
  target, a site URL that answered 2xx with something other than HTML; `PageFacts.resource`) is not a
  page: it is in `stats.resources` (same buckets as `totals`), in no `totals` bucket, in no template's
  `pages` and never in the score. Its findings (`img_broken`, `broken_external_link`) are on the pages
  that refer to it.
- `totals` puts every crawled page in exactly one bucket, in this order: `blocked` (a firewall challenged
  the crawler), `fetch_errors` (no response), `redirects` (the URL redirected), `broken` (final status
  400 or more), `ok` (everything else, 304 included); `pages` is their sum.
- URLs robots.txt disallows were never requested, so they are not crawled URLs: in no `totals` bucket
  (not `fetch_errors`: nothing failed; not `pages`, which therefore matches the audit's
  `pages_crawled`, and the coverage ratio is not diluted by them), in no template's `pages` and not in
  the score's audited pages. `stats.excluded_by_robots` counts them. The findings about them
  (`blocked_by_robots_txt`, `sitemap_url_blocked`) are still in `issues`. (Reports stored earlier
  counted them as fetch errors and audited pages without errors, which also raised the score.)
- `issues` has one row per check code, with the most severe severity seen for it (a few checks vary,
  e.g. `noindex`), `count` issues and `pages` distinct URLs; rows are sorted by severity, then pages,
  then count. `issue_counts` counts issues by their own severity.
- A template group's `pages` counts the template's crawled URLs that were not blocked (blocked pages
  were not audited, they are reported under `blocked`). An issue is `template_wide` when it is on at
  least `TEMPLATE_WIDE_SHARE` (90%) of those pages and on at least `TEMPLATE_WIDE_MIN_PAGES` (2).
  Issues without a template (site-wide findings such as robots.txt) are in `issues` and in the fix
  prompt but in no template group. Groups are sorted by pages; at most `max_template_groups` are kept,
  and `stats.templates` says how many there were.
- `sample_urls` are the shortest URLs (then alphabetical), so they do not depend on reading order.
- `blocked.by_section` counts blocked pages by first path segment (`/blog`, `/` for top-level pages);
  `coverage_warning` appears when more than 20% of the crawled pages were blocked, and whenever no HTML
  page was audited: then `health_score` is None (null) and the warning says why (`domain/report.py`).
- `fix_prompt` is the prompt string itself (`GET /crawls/{id}/fix-prompt` wraps it as `prompt`).

The tally is the one mutable object here on purpose: a report over a million issue rows must not need
them all in memory at once. Memory is about one string per audited page and one integer per distinct
issue identity; `add_issues` takes database-sized batches.
"""

import bisect
from collections.abc import Iterable, Mapping
from typing import Final

from attrs import frozen

from siteaudit.domain.diff import NewIssueSamples, PreviousAudit, diff_summary, identity_key
from siteaudit.domain.facts import PageFacts, RobotsFacts
from siteaudit.domain.issue import CheckSpec, Severity, priority
from siteaudit.domain.prompt import FixItem, compose_fix_prompt
from siteaudit.domain.report import (
    AllowListAdvice,
    Blocked,
    CheckSummary,
    IssueCounts,
    Reach,
    Report,
    Resources,
    ScoreInputs,
    ScoreStats,
    Stats,
    TemplateGroup,
    TemplateIssue,
    TemplateStats,
    Timings,
    Totals,
    coverage_warning,
)
from siteaudit.domain.score import FORMULA, NOT_SCORED, health_score, is_audited_page
from siteaudit.domain.template import path_segments

SAMPLE_URLS: Final = 5
TEMPLATE_WIDE_SHARE: Final = 0.9
TEMPLATE_WIDE_MIN_PAGES: Final = 2
MAX_TEMPLATE_GROUPS: Final = 1000

OK = "ok"
REDIRECT = "redirect"
BROKEN = "broken"
FETCH_ERROR = "fetch_error"
BLOCKED = "blocked"
EXCLUDED = "excluded"  # disallowed by robots.txt: never requested, in no `totals` bucket
_TOTALS_BUCKETS: Final = (OK, REDIRECT, BROKEN, FETCH_ERROR, BLOCKED)


@frozen
class PageOutcome:
    """What the report needs from one crawled URL."""

    url: str
    template: str
    status_code: int | None
    is_html: bool = True
    redirected: bool = False
    fetch_failed: bool = False
    blocked_by: str | None = None
    disallowed: bool = False  # robots.txt disallows it: never requested
    resource: bool = False  # fetched as a resource, not a page (`PageFacts.resource`)

    @classmethod
    def from_facts(cls, facts: PageFacts, template: str) -> "PageOutcome":
        return cls(
            url=facts.url,
            template=template,
            status_code=facts.status_code,
            is_html=facts.is_html,
            redirected=bool(facts.redirects),
            fetch_failed=facts.fetch_error is not None,
            blocked_by=facts.blocked_by,
            disallowed=facts.disallowed,
            resource=facts.resource,
        )

    @property
    def outcome(self) -> str:
        """The `totals` bucket of this URL, or `EXCLUDED` (see the module documentation)."""
        if self.disallowed:
            return EXCLUDED
        if self.blocked_by is not None:
            return BLOCKED
        if self.fetch_failed or self.status_code is None:
            return FETCH_ERROR
        if self.redirected or (300 <= self.status_code < 400 and self.status_code != 304):
            return REDIRECT
        if self.status_code >= 400:
            return BROKEN
        return OK


@frozen
class AuditIdentity:
    crawl_id: int
    site_url: str
    partial: bool = False


class _Samples:
    """The `SAMPLE_URLS` shortest URLs seen (then alphabetical), each with one piece of evidence text."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[tuple[int, str, str | None]] = []

    def offer(self, url: str, evidence: str | None = None) -> None:
        items = self.items
        if len(items) >= SAMPLE_URLS:
            worst = items[-1]
            if len(url) > worst[0] or (len(url) == worst[0] and url >= worst[1]):
                return
        bisect.insort(items, (len(url), url, evidence), key=_url_order)
        if len(items) > SAMPLE_URLS:
            items.pop()

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(url for _, url, _ in self.items)

    @property
    def evidence(self) -> tuple[str, ...]:
        return tuple(text for _, _, text in self.items if text)


def _url_order(item: tuple[int, str, str | None]) -> tuple[int, str]:
    return (item[0], item[1])


class _CheckCounter:
    __slots__ = ("count", "pages", "rank", "samples")

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.count = 0
        self.pages = 0
        self.samples = _Samples()

    @property
    def severity(self) -> Severity:
        return _BY_RANK[self.rank]


_RANK: Final = {severity: severity.rank for severity in Severity}
_BY_RANK: Final = {severity.rank: severity for severity in Severity}


def _value_order(code: str, counter: _CheckCounter) -> tuple[tuple[int, int, int, int], int, str]:
    return (priority(counter.severity, counter.pages), -counter.count, code)


class ReportTally:
    """Aggregates of one audit, fed page by page and issue by issue (one `add_page` per stored URL:
    crawled, or excluded by robots.txt)."""

    def __init__(self, *, previous: PreviousAudit | None = None) -> None:
        self._totals = {OK: 0, REDIRECT: 0, BROKEN: 0, FETCH_ERROR: 0, BLOCKED: 0, EXCLUDED: 0}
        self._audited: set[str] = set()
        self._html_pages = 0  # audited pages that answered with HTML
        self._resources = {OK: 0, REDIRECT: 0, BROKEN: 0, FETCH_ERROR: 0, BLOCKED: 0}
        self._error_urls: set[str] = set()
        self._template_pages: dict[str, int] = {}
        self._blocked_providers: dict[str, int] = {}
        self._blocked_sections: dict[str, int] = {}
        self._blocked_samples = _Samples()
        self._blocked_skipped = 0
        self._severity_counts = dict.fromkeys(Severity, 0)
        self._checks: dict[str, _CheckCounter] = {}
        self._groups: dict[tuple[str, str], _CheckCounter] = {}
        self._seen: set[int] = set()
        self._error_keys: set[int] = set()
        self._previous = previous
        self._new_samples = NewIssueSamples()

    def add_page(self, page: PageOutcome) -> None:
        outcome = page.outcome
        if page.resource and outcome != EXCLUDED:
            self._resources[outcome] += 1
            return
        self._totals[outcome] += 1
        if outcome == EXCLUDED:
            return
        if outcome == BLOCKED:
            provider = page.blocked_by or "unknown"
            self._blocked_providers[provider] = self._blocked_providers.get(provider, 0) + 1
            segments = path_segments(page.url)
            section = "/" + segments[0] if len(segments) > 1 else "/"
            self._blocked_sections[section] = self._blocked_sections.get(section, 0) + 1
            self._blocked_samples.offer(page.url)
            return
        self._template_pages[page.template] = self._template_pages.get(page.template, 0) + 1
        audited = is_audited_page(
            status_code=page.status_code,
            is_html=page.is_html,
            redirected=outcome == REDIRECT,
            blocked=False,
            fetch_failed=page.fetch_failed,
        )
        if audited:
            before = len(self._audited)
            self._audited.add(page.url)
            if page.is_html and len(self._audited) != before:
                self._html_pages += 1

    def add_blocked_skipped(self, count: int) -> None:
        """URLs the crawler did not fetch because their section kept answering with challenges."""
        self._blocked_skipped += count

    def add_issue(
        self, check_code: str, severity: Severity, url: str, template: str, evidence: str | None = None
    ) -> None:
        """One issue row; `evidence` is crawled text worth quoting in the fix prompt (a title, an anchor)."""
        self.add_issues(((check_code, severity, url, template, evidence),))

    def add_issues(
        self,
        rows: Iterable[tuple[str, Severity, str, str, str | None]],
        *,
        firsts: Iterable[bool] | None = None,
    ) -> None:
        """Issue rows `(check_code, severity, url, template, evidence)`, e.g. one database batch.

        A large audit has about a million issues, so this loop is kept to a handful of dict and set
        operations per row, with everything it touches bound to locals.

        `firsts`, one per row, says whether the row is its (check, URL)'s first: from a caller that
        already tells them apart (finalisation's fix-task findings), so that without a previous audit
        to diff against the tally keeps no identity key of its own (about 70 bytes an issue).
        """
        severity_counts = self._severity_counts
        error_urls = self._error_urls
        given = None if firsts is None or self._previous is not None else iter(firsts)
        seen = self._seen
        error_keys = self._error_keys
        previous_keys = self._previous.keys if self._previous is not None else None
        new_samples = self._new_samples
        checks = self._checks
        groups = self._groups
        rank_of = _RANK
        error = Severity.ERROR
        for check_code, raw_severity, url, template, evidence in rows:
            severity = raw_severity if raw_severity.__class__ is Severity else Severity(raw_severity)
            severity_counts[severity] += 1
            key = identity_key(check_code, url)
            if severity is error:
                error_keys.add(key)
                if check_code not in NOT_SCORED:
                    error_urls.add(url)
            if given is None:
                before = len(seen)
                seen.add(key)
                first = len(seen) != before
            else:
                first = next(given)
            if first and previous_keys is not None and key not in previous_keys:
                new_samples.offer(check_code, severity, url)
            rank = rank_of[severity]
            check = checks.get(check_code)
            if check is None:
                check = checks[check_code] = _CheckCounter(rank)
            group = groups.get((template, check_code))
            if group is None:
                group = groups[(template, check_code)] = _CheckCounter(rank)
            check.count += 1
            group.count += 1
            if rank < group.rank:
                group.rank = rank
            if rank < check.rank:
                check.rank = rank
            if first:
                check.pages += 1
                group.pages += 1
                # The usual case, a URL no shorter than the five kept, is rejected without a call.
                items = group.samples.items
                if len(items) < SAMPLE_URLS or len(url) <= items[-1][0]:
                    group.samples.offer(url, evidence)

    def _template_wide(self, template: str, counter: _CheckCounter) -> bool:
        pages = self._template_pages.get(template, 0)
        return (
            pages > 0
            and counter.pages >= TEMPLATE_WIDE_MIN_PAGES
            and counter.pages >= TEMPLATE_WIDE_SHARE * pages
        )

    def build(
        self,
        audit: AuditIdentity,
        *,
        catalogue: Mapping[str, CheckSpec],
        thresholds: Mapping[str, int | float],
        timings: Timings,
        advice: AllowListAdvice | None = None,
        max_template_groups: int = MAX_TEMPLATE_GROUPS,
        robots: RobotsFacts | None = None,
    ) -> Report:
        """The report (docs/scoring.md); `robots` is what the host's robots.txt answered (None: not read), which
        the coverage warning of an audit without a score names."""
        score = health_score(
            pages_with_errors=len(self._error_urls & self._audited),
            audited_pages=len(self._audited),
            html_pages=self._html_pages,
        )
        resources = Resources(
            checked=sum(self._resources.values()),
            ok=self._resources[OK],
            redirects=self._resources[REDIRECT],
            broken=self._resources[BROKEN],
            fetch_errors=self._resources[FETCH_ERROR],
            blocked=self._resources[BLOCKED],
        )
        templates = self._template_groups(max_template_groups)
        items = [
            FixItem(
                check_code=code,
                severity=counter.severity,
                template=template,
                pages=counter.pages,
                template_pages=self._template_pages.get(template, 0),
                template_wide=self._template_wide(template, counter),
                sample_urls=counter.samples.urls,
                examples=counter.samples.evidence,
            )
            for (template, code), counter in self._groups.items()
        ]
        pages = sum(self._totals[bucket] for bucket in _TOTALS_BUCKETS)
        warning = coverage_warning(
            blocked=self._totals[BLOCKED],
            pages=pages,
            providers=sorted(self._blocked_providers),
            advice=advice or AllowListAdvice(),
            reach=Reach(
                html_pages=score.html_pages,
                pages=pages,
                fetch_errors=self._totals[FETCH_ERROR],
                blocked=self._totals[BLOCKED],
                excluded_by_robots=self._totals[EXCLUDED],
                resources=resources,
                robots=robots,
            ),
        )
        return Report(
            crawl_id=audit.crawl_id,
            health_score=score.score,
            partial=audit.partial,
            totals=Totals(
                pages=pages,
                ok=self._totals[OK],
                redirects=self._totals[REDIRECT],
                broken=self._totals[BROKEN],
                fetch_errors=self._totals[FETCH_ERROR],
                blocked=self._totals[BLOCKED],
            ),
            issues=tuple(
                CheckSummary(
                    check_code=code,
                    severity=counter.severity,
                    count=counter.count,
                    pages=counter.pages,
                    fix=catalogue[code].fix if code in catalogue else "",
                )
                for code, counter in sorted(self._checks.items(), key=lambda kv: _value_order(*kv))
            ),
            issue_counts=IssueCounts(
                error=self._severity_counts[Severity.ERROR],
                warning=self._severity_counts[Severity.WARNING],
                notice=self._severity_counts[Severity.NOTICE],
            ),
            blocked=Blocked(
                count=self._totals[BLOCKED],
                skipped=self._blocked_skipped,
                providers=dict(sorted(self._blocked_providers.items())),
                by_section=dict(sorted(self._blocked_sections.items(), key=lambda kv: (-kv[1], kv[0]))),
                sample_urls=self._blocked_samples.urls,
            ),
            coverage_warning=warning,
            stats=Stats(
                thresholds=dict(thresholds),
                timings=timings,
                score=ScoreStats(
                    value=score.score,
                    formula=FORMULA,
                    inputs=ScoreInputs(
                        pages_with_errors=score.pages_with_errors,
                        audited_pages=score.audited_pages,
                        html_pages=score.html_pages,
                    ),
                ),
                templates=TemplateStats(
                    total=len({t for t in self._template_pages if t} | {t for t, _ in self._groups if t}),
                    shown=len(templates),
                    template_wide_rule=(
                        f"on at least {TEMPLATE_WIDE_SHARE:.0%} of the template's pages "
                        f"and at least {TEMPLATE_WIDE_MIN_PAGES} pages"
                    ),
                ),
                excluded_by_robots=self._totals[EXCLUDED],
                resources=resources,
            ),
            templates=templates,
            # An audit without a score saw no page: it has nothing to compare (docs/scoring.md).
            diff=None
            if self._previous is None or score.score is None
            else diff_summary(
                self._previous,
                current_keys=self._seen,
                current_error_keys=self._error_keys,
                samples=self._new_samples,
                health_score=score.score,
            ),
            fix_prompt=compose_fix_prompt(
                site_url=audit.site_url,
                health_score=score.score,
                items=items,
                catalogue=catalogue,
                coverage="" if warning is None else warning.message,
            ),
        )

    def _template_groups(self, limit: int) -> tuple[TemplateGroup, ...]:
        by_template: dict[str, list[tuple[str, _CheckCounter]]] = {t: [] for t in self._template_pages if t}
        for (template, code), counter in self._groups.items():
            if template:
                by_template.setdefault(template, []).append((code, counter))
        ordered = sorted(by_template, key=lambda t: (-self._template_pages.get(t, 0), t))[: max(limit, 0)]
        groups = []
        for template in ordered:
            rows = sorted(
                by_template[template],
                key=lambda row: (not self._template_wide(template, row[1]), *_value_order(*row)),
            )
            groups.append(
                TemplateGroup(
                    template=template,
                    pages=self._template_pages.get(template, 0),
                    issues=tuple(
                        TemplateIssue(
                            check_code=code,
                            severity=counter.severity,
                            count=counter.count,
                            pages=counter.pages,
                            template_wide=self._template_wide(template, counter),
                            sample_urls=counter.samples.urls,
                        )
                        for code, counter in rows
                    ),
                )
            )
        return tuple(groups)
