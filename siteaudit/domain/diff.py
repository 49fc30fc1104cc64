"""The diff of an audit against the site's previous one: issues that appeared and issues that went away.

Two audits have "the same issue" when check code and URL match (`Issue.identity`). Identities are kept
as 64-bit keys, so a million issues fit in a set of integers. The keys are Python's own hash of the
pair: about ten times cheaper than a cryptographic digest, which matters at a million issues, but
valid only inside one process (string hashing is salted per process): build `PreviousAudit` from the
previous audit's issue rows in the process that builds the report, and never store the keys.
A collision of two 64-bit keys among a million issues is about as likely as one in 30 million audits;
it would miscount one issue. The diff is null for a site's first audit.
"""

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any, Final

from attrs import frozen

from siteaudit.domain.issue import Severity

SAMPLE_LIMIT: Final = 20


def identity_key(check_code: str, url: str) -> int:
    """The 64-bit key of an issue identity (check code, URL), valid in this process only."""
    return hash((check_code, url))


@frozen
class PreviousAudit:
    """What the diff needs from the previous audit: its id, score and issue identity keys."""

    crawl_id: int
    health_score: int | None
    keys: frozenset[int]
    error_keys: frozenset[int]

    @classmethod
    def from_issues(
        cls, crawl_id: int, health_score: int | None, issues: Iterable[tuple[str, Severity | str, str]]
    ) -> "PreviousAudit":
        """Build from `(check_code, severity, url)` rows of the previous audit."""
        keys: set[int] = set()
        error_keys: set[int] = set()
        for check_code, severity, url in issues:
            key = identity_key(check_code, url)
            keys.add(key)
            if severity == Severity.ERROR:
                error_keys.add(key)
        return cls(
            crawl_id=crawl_id,
            health_score=health_score,
            keys=frozenset(keys),
            error_keys=frozenset(error_keys),
        )


class NewIssueSamples:
    """The first `SAMPLE_LIMIT` new issues in (severity, check code, URL) order, whatever the reading order."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: list[tuple[int, str, str, Severity]] = []

    def offer(self, check_code: str, severity: Severity, url: str) -> None:
        items = self._items
        items.append((_RANK[severity], check_code, url, severity))
        if len(items) >= 4 * SAMPLE_LIMIT:
            items.sort()
            del items[SAMPLE_LIMIT:]

    def as_list(self) -> list[dict[str, str]]:
        return [
            {"check_code": code, "severity": severity.value, "url": url}
            for _, code, url, severity in sorted(self._items)[:SAMPLE_LIMIT]
        ]


_RANK: Final = {severity: severity.rank for severity in Severity}


def diff_summary(
    previous: PreviousAudit,
    *,
    current_keys: AbstractSet[int],
    current_error_keys: AbstractSet[int],
    samples: NewIssueSamples,
    health_score: int,
) -> dict[str, Any]:
    """The diff object of the report (SPEC 2.5) from the current audit's identity keys.

    `current_error_keys` are the keys seen with severity error; the counts are set operations, so they
    cost C-speed passes over the sets rather than a Python step per issue.
    """
    matched = len(previous.keys & current_keys) if previous.keys else 0
    return {
        "previous_crawl_id": previous.crawl_id,
        "health_delta": None if previous.health_score is None else health_score - previous.health_score,
        "new": len(current_keys) - matched,
        "fixed": len(previous.keys) - matched,
        "new_errors": len(current_error_keys - previous.keys),
        "fixed_errors": len(previous.error_keys - current_keys),
        "new_samples": samples.as_list(),
    }


def audit_diff(
    previous: PreviousAudit | None, issues: Iterable[tuple[str, Severity | str, str]], health_score: int
) -> dict[str, Any] | None:
    """The diff of `(check_code, severity, url)` issues against the previous audit; None for the first."""
    if previous is None:
        return None
    keys: set[int] = set()
    error_keys: set[int] = set()
    samples = NewIssueSamples()
    for check_code, raw_severity, url in issues:
        severity = Severity(raw_severity)
        key = identity_key(check_code, url)
        if severity is Severity.ERROR:
            error_keys.add(key)
        if key not in keys:
            keys.add(key)
            if key not in previous.keys:
                samples.offer(check_code, severity, url)
    return diff_summary(
        previous, current_keys=keys, current_error_keys=error_keys, samples=samples, health_score=health_score
    )
