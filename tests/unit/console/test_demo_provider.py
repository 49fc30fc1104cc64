"""The demo provider: the same site and URLs give the same data in every process; another site id gives
other data; every answer is marked demo and stays on the site's own URLs."""

import subprocess
import sys
from datetime import date

from siteaudit.adapters.console.demo import DemoSearchConsole
from siteaudit.domain.console import Permission
from siteaudit.domain.ids import SiteId
from siteaudit.ports.searchconsole import SiteContext

ORIGIN = "https://retro-clock.example"
URLS = tuple(f"{ORIGIN}/clocks/{n}" for n in range(40)) + tuple(f"{ORIGIN}/search?q={n}" for n in range(20))
CONTEXT = SiteContext(SiteId(5), ORIGIN, URLS, frozenset(URLS[:30]))
START, END = date(2026, 10, 29), date(2026, 11, 25)


def snapshot(context: SiteContext) -> tuple[object, ...]:
    demo = DemoSearchConsole(context)
    prop = demo.properties()[0].url
    return (
        tuple(demo.page_days(prop, start=START, end=END)),
        tuple(demo.query_days(prop, start=START, end=END)),
        tuple(demo.inspect(prop, url) for url in URLS),
        tuple(demo.sitemaps(prop)),
    )


def test_the_same_site_gives_the_same_data() -> None:
    assert snapshot(CONTEXT) == snapshot(SiteContext(SiteId(5), ORIGIN, URLS, frozenset(URLS[:30])))


def test_the_data_does_not_depend_on_the_process_hash_seed() -> None:
    code = (
        "from tests.unit.console.test_demo_provider import snapshot, CONTEXT;"
        "import hashlib; print(hashlib.sha256(repr(snapshot(CONTEXT)).encode()).hexdigest())"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": "."},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(runs) == 1


def test_another_site_gets_other_data() -> None:
    assert snapshot(CONTEXT) != snapshot(SiteContext(SiteId(6), ORIGIN, URLS, frozenset(URLS[:30])))


def test_the_demo_owns_one_property_and_answers_only_for_its_urls() -> None:
    demo = DemoSearchConsole(CONTEXT)
    assert demo.demo is True
    (prop,) = demo.properties()
    assert (prop.url, prop.permission) == (ORIGIN + "/", Permission.OWNER)
    days = demo.page_days(prop.url, start=START, end=END)
    assert days and {d.url for d in days} <= set(URLS)
    assert all(START <= d.day <= END and 0 <= d.clicks <= d.impressions for d in days)
    assert demo.page_days("https://elsewhere.example/", start=START, end=END) == []
    states = {demo.inspect(prop.url, url).coverage_state for url in URLS}
    assert "Submitted and indexed" in states and len(states) >= 3  # indexed and several reasons why not
    indexed = [url for url in URLS if demo.inspect(prop.url, url).verdict == "PASS"]
    assert {d.url for d in days} <= set(indexed)  # only indexed pages are shown in search
