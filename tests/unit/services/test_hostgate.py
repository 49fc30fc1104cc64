"""The host gate: audits of one host share its rate through one rate limiter; other hosts are free."""

import asyncio
import time

from siteaudit.adapters.memory.ratelimit import MemoryRateLimiter
from siteaudit.domain.hostlimit import HostLimits
from siteaudit.services.crawl.hostgate import HostGate


def busiest_second(times: list[float]) -> int:
    times = sorted(times)
    return max(sum(1 for t in times if first <= t < first + 1.0) for first in times)


def test_three_audits_of_one_host_share_its_rate_and_another_host_is_not_held_back() -> None:
    limiter = MemoryRateLimiter()
    limits = HostLimits(20.0, 2, (("other.example", 1000.0),))
    gates = [HostGate(limiter, limits) for _ in range(3)]  # one per audit, as each slice builds its own
    granted: list[float] = []
    other: list[float] = []

    async def audit(gate: HostGate) -> None:
        for _ in range(12):
            await gate.turn("shop.example")
            granted.append(time.monotonic())
            await gate.turn("other.example")
            other.append(time.monotonic())

    async def main() -> float:
        started = time.monotonic()
        await asyncio.gather(*(audit(gate) for gate in gates))
        return time.monotonic() - started

    elapsed = asyncio.run(main())
    assert len(granted) == 36
    assert busiest_second(granted) <= 20 + 2
    assert elapsed >= (36 - 2) / 20 * 0.95  # the shared rate, not three times it
    assert sum(gate.waited_s for gate in gates) > 0
    assert len(other) == 36  # the other host's turns were never what held anyone


def test_without_a_limiter_the_gate_never_waits() -> None:
    gate = HostGate(None, HostLimits(0.1, 1))

    async def main() -> None:
        for _ in range(50):
            await gate.turn("shop.example")

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < 1.0 and gate.waited_s == 0
