"""SITEAUDIT_UNPACED_HOSTS: audits of the operator's chosen hosts skip their own pacing (max_rps and
Crawl-delay); every other audit keeps it, and the shared host limit is not touched."""

from datetime import UTC, datetime

from siteaudit.bootstrap import _crawl_limits
from siteaudit.domain.audit import Audit
from siteaudit.domain.crawl import CrawlLimits, pace_interval
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.settings import Settings


def _audit(url: str, *, max_rps: float = 10.0) -> Audit:
    return Audit(
        id=AuditId(1),
        team_id=TeamId(1),
        user_id=UserId(1),
        payer_id=UserId(1),
        url=url,
        origin=url.rstrip("/"),
        created_at=datetime(2026, 11, 25, tzinfo=UTC),
        max_pages=100_000,
        concurrency=20,
        max_rps=max_rps,
    )


def test_the_setting_reaches_the_crawl_limits() -> None:
    settings = Settings.from_env({"SITEAUDIT_UNPACED_HOSTS": " Bench.Example. ,127.0.0.1,, "})
    assert settings.unpaced_hosts == ("bench.example", "127.0.0.1")
    assert _crawl_limits(settings).unpaced_hosts == frozenset({"bench.example", "127.0.0.1"})
    assert Settings.from_env({}).unpaced_hosts == ()


def test_an_audit_of_an_unpaced_host_waits_for_no_turn_of_its_own() -> None:
    limits = _crawl_limits(Settings.from_env({"SITEAUDIT_UNPACED_HOSTS": "bench.example,127.0.0.1"}))
    for url in ("http://bench.example/", "https://BENCH.example:8443/shop", "http://127.0.0.1:8123/"):
        mine = limits.for_audit(_audit(url))
        assert not mine.paced
        assert not mine.unlimited_rate  # the shared host limit (HostGate) still applies
        assert pace_interval(mine, None) == 0.0
        assert pace_interval(mine, 5.0) == 0.0  # nor robots.txt's Crawl-delay


def test_every_other_audit_keeps_its_pacing() -> None:
    limits = _crawl_limits(Settings.from_env({"SITEAUDIT_UNPACED_HOSTS": "bench.example"}))
    for url in ("http://www.bench.example/", "http://other.example/", "http://bench.example.org/"):
        theirs = limits.for_audit(_audit(url, max_rps=3.0))
        assert theirs.paced
        assert pace_interval(theirs, None) == 1 / 3
        assert pace_interval(theirs, 5.0) == 5.0
    assert CrawlLimits().for_audit(_audit("http://bench.example/")).paced  # the default: nobody unpaced
