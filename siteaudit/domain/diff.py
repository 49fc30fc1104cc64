"""The diff of an audit against the site's previous one: issues that appeared and issues that went away.

Two audits have "the same issue" when check code and URL match (`Issue.identity`). Identities are kept
as 64-bit keys, so a million issues fit in a set of integers. The keys are Python's own hash of the
pair: about ten times cheaper than a cryptographic digest, which matters at a million issues, but
valid only inside one process (string hashing is salted per process): build `PreviousAudit` from the
previous audit's issue rows in the process that builds the report, and never store the keys.
A collision of two 64-bit keys among a million issues is about as likely as one in 30 million audits;
it would miscount one issue. The diff is null for a site's first audit.

Once an audit is archived its issue rows are gone, so the identities it had are kept beside its report as
`ArchivedIdentities`: BLAKE2b digests (stable across processes, unlike the keys above) cut to just enough
bits that a false match is about one in a million per issue (`ceil(log2(n)) + 20` bits for n identities).
Stored sorted, zlib-compressed and base64-encoded, about 4.5 bytes a distinct issue.
"""

import base64
import enum
import hashlib
import math
import zlib
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final, Self

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


@frozen
class NewIssue:
    """One of the first issues of the diff that the previous audit did not have."""

    check_code: str
    severity: Severity
    url: str


@frozen
class Diff:
    """The diff of an audit against the previous one; the report holds None for a first audit."""

    previous_crawl_id: int
    health_delta: int | None
    new: int
    fixed: int
    new_errors: int
    fixed_errors: int
    new_samples: tuple[NewIssue, ...]


class DiffBasis(enum.StrEnum):
    """What the diff was counted from (the report's `stats.diff_basis`)."""

    ISSUE_ROWS = "issue_rows"  # the previous audit's issue rows
    ARCHIVED_IDENTITIES = "archived_identities"  # the identities kept when it was archived
    CHECK_COUNTS = (
        "check_counts"  # per-check page counts of its report (archived before identities were kept)
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

    def as_tuple(self) -> tuple[NewIssue, ...]:
        return tuple(
            NewIssue(check_code=code, severity=severity, url=url)
            for _, code, url, severity in sorted(self._items)[:SAMPLE_LIMIT]
        )


_RANK: Final = {severity: severity.rank for severity in Severity}


def diff_summary(
    previous: PreviousAudit,
    *,
    current_keys: AbstractSet[int],
    current_error_keys: AbstractSet[int],
    samples: NewIssueSamples,
    health_score: int | None,
) -> Diff:
    """The diff object of the report from the current audit's identity keys.

    `current_error_keys` are the keys seen with severity error; the counts are set operations, so they
    cost C-speed passes over the sets rather than a Python step per issue.
    """
    matched = len(previous.keys & current_keys) if previous.keys else 0
    return Diff(
        previous_crawl_id=previous.crawl_id,
        health_delta=None
        if previous.health_score is None or health_score is None
        else health_score - previous.health_score,
        new=len(current_keys) - matched,
        fixed=len(previous.keys) - matched,
        new_errors=len(current_error_keys - previous.keys),
        fixed_errors=len(previous.error_keys - current_keys),
        new_samples=samples.as_tuple(),
    )


def audit_diff(
    previous: PreviousAudit | None,
    issues: Iterable[tuple[str, Severity | str, str]],
    health_score: int | None,
) -> Diff | None:
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


# --- identities kept through archival ------------------------------------------------------------------

_FORMAT: Final = "blake2b-sorted-zlib-v1"
_FALSE_MATCH_BITS: Final = 20  # a stray match about once in 2**20 lookups


def identity_digest(check_code: str, url: str) -> int:
    """64 bits of BLAKE2b over an issue identity: stable across processes, unlike `identity_key`."""
    digest = hashlib.blake2b(check_code.encode() + b"\x00" + url.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@frozen
class ArchivedIdentities:
    """The issue identities of an audit, as truncated digests: what a diff needs once the rows are gone."""

    bits: int
    keys: frozenset[int]
    error_keys: frozenset[int]

    @staticmethod
    def bits_for(count: int) -> int:
        return min(64, max(1, math.ceil(math.log2(max(count, 1)))) + _FALSE_MATCH_BITS)

    def key(self, check_code: str, url: str) -> int:
        """The identity's key in this set's space (the digest cut to `bits`)."""
        return identity_digest(check_code, url) >> (64 - self.bits)

    @classmethod
    def from_issues(cls, issues: Iterable[tuple[str, Severity, str]]) -> Self:
        """From `(check_code, severity, url)` rows; an identity seen with severity error is an error."""
        digests: dict[int, bool] = {}
        for check_code, severity, url in issues:
            digest = identity_digest(check_code, url)
            digests[digest] = digests.get(digest, False) or severity is Severity.ERROR
        bits = cls.bits_for(len(digests))
        shift = 64 - bits
        return cls(
            bits=bits,
            keys=frozenset(d >> shift for d in digests),
            error_keys=frozenset(d >> shift for d, error in digests.items() if error),
        )

    def as_json(self) -> dict[str, Any]:
        """The stored form: the digests packed, with the format and width to read them back."""
        return {
            "format": _FORMAT,
            "bits": self.bits,
            "count": len(self.keys),
            "keys": _pack(self.keys, self.bits),
            "error_keys": _pack(self.error_keys, self.bits),
        }

    @classmethod
    def from_json(cls, value: Any) -> Self | None:
        """Read the stored form back; None when absent or in a format this code cannot read."""
        if not isinstance(value, Mapping) or value.get("format") != _FORMAT:
            return None
        bits = int(value["bits"])
        return cls(
            bits=bits,
            keys=frozenset(_unpack(value["keys"], bits)),
            error_keys=frozenset(_unpack(value["error_keys"], bits)),
        )


def _pack(keys: Iterable[int], bits: int) -> str:
    width = (bits + 7) // 8
    raw = b"".join(key.to_bytes(width, "big") for key in sorted(keys))
    return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


def _unpack(packed: str, bits: int) -> Iterator[int]:
    width = (bits + 7) // 8
    raw = zlib.decompress(base64.b64decode(packed))
    from_bytes = int.from_bytes
    return (from_bytes(raw[i : i + width], "big") for i in range(0, len(raw), width))
