"""Politeness across audits: one request rate per target host, shared by every audit and
every worker process, whatever each audit's own `max_rps`.

Each audit paces itself (`CrawlLimits.max_rps`, robots.txt's Crawl-delay); fifty audits of one shop at
3 requests/s each would still send it 150. The host limit caps their sum: every request to a host first
takes a turn from the host's bucket (a GCRA, kept where every worker sees it), and waits when there is
none. The operator may give chosen hosts other rates (`overrides`: a shop that asked to be spared, a
partner's big site that welcomes more).
"""

import math
from collections.abc import Iterable
from hashlib import sha256
from typing import Final

from attrs import field, frozen, validators

DEFAULT_HOST_RPS: Final = 10.0
DEFAULT_HOST_BURST: Final = 5
BUCKET_PREFIX: Final = "crawl-host:"
_MAX_KEY: Final = 200  # `rate_buckets.key`


@frozen
class HostRate:
    """A host's limit as a GCRA bucket: `count` requests per `period_s` (a burst of `count`, then one
    every `1 / requests_per_s`)."""

    count: int
    period_s: float


def _normalised(pairs: Iterable[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    return tuple((normal_host(host), float(rate)) for host, rate in pairs)


def normal_host(host: str) -> str:
    return host.strip().rstrip(".").lower()


def _positive_rates(instance: object, attribute: object, value: tuple[tuple[str, float], ...]) -> None:
    for host, rate in value:
        if not host or not rate > 0 or math.isinf(rate):
            raise ValueError(f"host limit {host!r}={rate!r}: a host name and a rate above 0 are needed")


@frozen
class HostLimits:
    """Requests per second per target host: `requests_per_s` for every host, `overrides` for chosen ones
    (exact host names, lower case). `burst`: requests a quiet host may get back to back, never more than
    one second's worth of its rate (a host limited to 0.5/s gets one request at a time)."""

    requests_per_s: float = field(default=DEFAULT_HOST_RPS, validator=validators.gt(0))
    burst: int = field(default=DEFAULT_HOST_BURST, validator=validators.ge(1))
    overrides: tuple[tuple[str, float], ...] = field(
        default=(), converter=_normalised, validator=_positive_rates
    )

    def rate_of(self, host: str) -> float:
        host = normal_host(host)
        for name, rate in self.overrides:
            if name == host:
                return rate
        return self.requests_per_s

    def bucket_of(self, host: str) -> HostRate:
        rate = self.rate_of(host)
        count = max(1, min(self.burst, math.floor(rate)))
        return HostRate(count, count / rate)


def bucket_key(host: str) -> str:
    """The rate bucket of a target host (a digest when the name would not fit the key column)."""
    key = BUCKET_PREFIX + normal_host(host)
    return key if len(key) <= _MAX_KEY else BUCKET_PREFIX + sha256(key.encode()).hexdigest()


def parse_host_limits(value: str) -> tuple[tuple[str, float], ...]:
    """`host=rate,host=rate` (SITEAUDIT_HOST_LIMITS): the operator's per-host rates, requests per second."""
    pairs: list[tuple[str, float]] = []
    for part in value.replace(";", ",").split(","):
        if not part.strip():
            continue
        host, sep, rate = part.partition("=")
        try:
            number = float(rate)
        except ValueError:
            number = math.nan
        if not sep or not normal_host(host) or not number > 0 or math.isinf(number):
            raise ValueError(f"SITEAUDIT_HOST_LIMITS: {part.strip()!r} is not host=requests-per-second")
        pairs.append((normal_host(host), number))
    return tuple(pairs)
