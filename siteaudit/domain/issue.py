"""Findings: severities, check scopes, the shape of a catalogue entry, and an issue row."""

import enum
from collections.abc import Mapping
from typing import Any

from attrs import field, frozen


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTICE = "notice"

    @property
    def rank(self) -> int:
        """0 for the most severe, so sorting by rank puts errors first."""
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.NOTICE: 2}


def priority(
    severity: Severity, pages: int, *, clicks: int | None = None, impressions: int | None = None
) -> tuple[int, int, int, int]:
    """The one ranking rule of work to do (fix tasks, the fix prompt's fixes, the report's checks), as a
    sort key, smallest first: severity (errors, then warnings, then notices), then pages affected, then
    search traffic (clicks, then impressions over 28 days; unknown counts as none). A notice on hundreds
    of pages never outranks a broken link on a few."""
    return (severity.rank, -pages, -(clicks or 0), -(impressions or 0))


class CheckScope(enum.StrEnum):
    """What a check needs to be judged (docs/checks.md): only page-level scopes can be rechecked."""

    PAGE = "page"
    PAGE_TARGETS = "page+targets"
    LINK_GRAPH = "link-graph"
    SITEMAP = "sitemap"
    SITE_WIDE = "site-wide"
    SEARCH_ENGINE = "search-engine"

    @property
    def recheckable(self) -> bool:
        return self in (CheckScope.PAGE, CheckScope.PAGE_TARGETS)


@frozen
class CheckSpec:
    """One entry of the check catalogue: the single source of titles, fix texts and recheck rules."""

    code: str
    severity: Severity
    scope: CheckScope
    title: str
    why: str
    fix: str
    group: str = ""

    @property
    def recheckable(self) -> bool:
        return self.scope.recheckable


@frozen
class Issue:
    """One finding on one URL. `details` says what was seen (JSON-compatible values only)."""

    check_code: str
    severity: Severity
    url: str
    template: str = ""
    details: Mapping[str, Any] = field(factory=dict, eq=False)

    @property
    def identity(self) -> tuple[str, str]:
        """What makes two audits' issues "the same issue" for the diff: check code and URL."""
        return (self.check_code, self.url)
