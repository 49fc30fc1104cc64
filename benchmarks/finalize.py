"""Finalising a large audit on PostgreSQL, against one `SELECT count(*)` pass over its link rows.

    python benchmarks/finalize.py [--pages 100000] [--links-per-page 10] [--no-site] [--dense] [--profile]
        [--trace] [--dump FILE]

Creates a database of its own (random name) on SITEAUDIT_BENCH_POSTGRES_URL (default: the local server,
user postgres), migrates it, and drops it at the end. A synthetic site (products, blog, docs in two
languages, categories; 1% broken pages, 1% redirects, duplicate titles and near-duplicate sketches whose
values are shaped as the extractor's, 10 links a page of which 1 an image) is written through the
project's SQL crawl store, with the page checks' own issues, into an audit that is then `finalizing`.
The same site's previous audit exists as an archived audit (report only, with its issue identities), so
the diff is part of the work. Both audits are of a
registered, verified site, as in production (`scale_audit.py`), so the site's fix tasks are refreshed
from the findings too: the previous audit opens them, this one refreshes them (`--no-site`: an audit of
a plain URL, no tasks).

Then, in the same run: `finalize_audit` end to end (site checks over 1,000,000 links, templates, report,
diff, fix prompt, audit done, credits settled), and one `SELECT count(*)` over the same link rows as the
floor (after ANALYZE, as autovacuum would have run it after such a load). Prints both and the ratio.
Target: finalisation under 30 s at 1,000,000 links (a regression guard since the 2026-11-25 scaling
work, which retired the old "within 20 times the floor": the ratio is still printed, for reading).
`--dense` gives the site `scale_audit.py`'s density of findings, about 4.6 issues a page (1.7 without).
`--profile` adds a cProfile listing; `--trace` a tracemalloc profile of the site checks' stages, the
templates and the report's issue pass.
"""

import argparse
import cProfile
import gc
import os
import pstats
import secrets
import threading
import time
import tracemalloc
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
from attrs import evolve
from psycopg import sql

from siteaudit.adapters.sql import dispose_engines, migrate, sql_crawl_store, sql_unit_of_work_factory
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.checks import PageContext, check_page, site
from siteaudit.domain.checks.site import LinkBatch
from siteaudit.domain.credit import credits
from siteaudit.domain.facts import Hop, HtmlFacts, Image, Link, LinkKind, PageFacts
from siteaudit.domain.ids import AuditId, SiteId, TeamId, UserId
from siteaudit.domain.issue import Issue
from siteaudit.domain.site import Site, VerifyMethod
from siteaudit.domain.thresholds import Thresholds
from siteaudit.services import account as accounts
from siteaudit.services import archive as archival
from siteaudit.services import audit as audits
from siteaudit.services import finalize

ADMIN_URL = os.environ.get("SITEAUDIT_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
SITE = "https://retro-clock.example"
NAV = ("/", "/products", "/blog", "/about")
SKETCH = 128


def rss_mb() -> float:
    """This process's resident set (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class RssPeak:
    """The process's peak RSS while something runs, sampled by a thread every 10 ms (the kernel's own
    high-water mark would include the site written before)."""

    def __init__(self) -> None:
        self.before_mb = self.peak_mb = rss_mb()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def start(self) -> "RssPeak":
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._done.wait(0.01):
            self.peak_mb = max(self.peak_mb, rss_mb())

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
        self.peak_mb = max(self.peak_mb, rss_mb())


def path_of(i: int) -> str:
    """The i-th page's path: 60% products, 20% blog, 18% docs in two languages, the rest categories."""
    kind = i % 50
    if kind < 30:
        return f"/products/{100_000 + i}"
    if kind < 40:
        return f"/blog/how-to-restore-clock-{i}"
    if kind < 49:
        return f"/docs/{'en' if i % 2 else 'de'}/page-{i}"
    return f"/category/cat-{i}"


def sketch_of(i: int) -> tuple[int, ...]:
    """Values shaped as the extractor's (`adapters/html/extract.py`): a 32-bit hash a bin, plus, for the
    third of pages whose text is short enough to leave bins empty, a borrowed bin's rotation times 2**32.
    Pages in families of 500 share 122 of 128 values (near-duplicates); the rest differ."""
    family = i // 500 if i % 97 == 0 else None
    values = []
    for k in range(SKETCH):
        seed = family if family is not None and k >= 6 else i
        rotation = (seed + k) % 5 if seed % 3 == 0 else 0
        values.append((seed * 1_000_003 + k * 7_919) % 2**32 + rotation * 2**32)
    return tuple(values)


def make_page(i: int, pages: int, links_per_page: int, *, dense: bool = False) -> PageFacts:
    """The i-th page; `dense`: `scale_audit.py`'s density of findings (about 4.6 a page, 1.7 otherwise):
    no HSTS header, no Open Graph, three pages in four without a canonical, and some without a
    description, without an h1 or thin."""
    path = "/" if i == 0 else path_of(i)
    url = SITE + path
    depth = 0 if i == 0 else 1 + i % 6
    if i and i % 100 == 1:
        return PageFacts(url=url, depth=depth, status_code=404, final_url=url, content_type="text/html")
    if i and i % 100 == 2:
        target = SITE + path_of((i + 7) % pages)
        return PageFacts(
            url=url,
            depth=depth,
            status_code=200,
            final_url=target,
            redirects=(Hop(url, 301, target),),
            content_type="text/html",
        )
    # Broken and redirecting pages (2%) have no links; two other pages in a hundred carry twice as many,
    # so the audit has exactly `links_per_page` links per page.
    extra = links_per_page if i % 100 in (3, 4) else 0
    content = [SITE + path_of((i * 7 + k * 13 + 1) % pages or 1) for k in range(links_per_page + extra - 5)]
    links = (
        *(Link(target=SITE + p) for p in NAV),
        *(Link(target=t) for t in content),
        Link(target=f"{SITE}/img/{i}.jpg", kind=LinkKind.IMG),
    )
    title = "Clock" if i % 100 == 3 else f"Retro clock {i} | Retro Clock"
    html = HtmlFacts(
        titles=(title,),
        meta_descriptions=()
        if dense and i % 7 == 3
        else (f"A restored mechanical clock, number {i}, shipped worldwide from our workshop.",),
        h1s=() if dense and i % 13 == 6 else (f"Retro clock {i}",),
        heading_levels=(1, 2, 2),
        lang="en",
        viewport="width=device-width, initial-scale=1",
        meta_charset="utf-8",
        canonicals=() if dense and i % 4 else (url,),
        links=links,
        images=(Image(f"{SITE}/img/{i}.jpg", has_alt=i % 5 != 0, width="640", height="480"),),
        word_count=15 if dense and i % 17 == 2 else 150 + i % 500,
        text_chars=(150 + i % 500) * 6,
        fingerprint=f"{(i if i % 211 else i // 1000) * 2654435761 % 2**64:016x}",
        sketch=sketch_of(i),
        open_graph=frozenset() if dense else frozenset({"og:title", "og:description", "og:image"}),
    )
    return PageFacts(
        url=url,
        depth=depth,
        status_code=200,
        final_url=url,
        content_type="text/html",
        headers=() if dense else (("strict-transport-security", "max-age=63072000"),),
        in_sitemap=i % 3 != 0,
        html=html,
    )


def chunks(start: int, stop: int, size: int) -> Iterator[range]:
    for low in range(start, stop, size):
        yield range(low, min(low + size, stop))


def write_site(
    crawl: Any, audit_id: AuditId, pages: int, links_per_page: int, *, dense: bool = False
) -> tuple[int, int, int]:
    context = PageContext(start_url=SITE + "/")
    limits = Thresholds()
    counts = [0, 0, 0]
    for block in chunks(0, pages, 1_000):
        facts = [make_page(i, pages, links_per_page, dense=dense) for i in block]
        links = [(p.url, link) for p in facts if p.html for link in p.html.links]
        issues: list[Issue] = [i for p in facts for i in check_page(p, thresholds=limits, context=context)]
        counts[0] += crawl.write_pages(audit_id, facts)
        counts[1] += crawl.write_links(audit_id, links)
        counts[2] += crawl.write_issues(audit_id, issues)
    return counts[0], counts[1], counts[2]


def database_urls(name: str) -> tuple[str, str]:
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    password = f":{info['password']}" if info.get("password") else ""
    url = (
        f"postgresql+psycopg://{info.get('user', 'postgres')}{password}@{info.get('host', '127.0.0.1')}"
        f":{info.get('port', 5432)}/{name}"
    )
    return url, psycopg.conninfo.make_conninfo(ADMIN_URL, dbname=name)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--links-per-page", type=int, default=10)
    parser.add_argument("--profile", action="store_true", help="print the top of a cProfile listing")
    parser.add_argument("--no-site", action="store_true", help="audits of a plain URL: no fix tasks")
    parser.add_argument(
        "--dense",
        action="store_true",
        help="scale_audit.py's density of findings: about 4.6 issues a page (1.7 without)",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="tracemalloc while finalising: the memory held after and the peak during each stage of the"
        " site checks, and the largest allocations held once the pages are read (slower)",
    )
    parser.add_argument(
        "--dump",
        metavar="FILE",
        help="write what finalisation made (report but its timings, issues, templates, fix tasks) to FILE,"
        " to compare two versions' runs with diff",
    )
    args = parser.parse_args()
    if args.links_per_page < 6:
        parser.error("--links-per-page must be at least 6 (4 navigation links, 1 image, 1 content link)")

    name = f"siteaudit_bench_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url, dsn = database_urls(name)
    try:
        engine = create_engine(url)
        migrate(engine)
        engine.dispose()
        uow = sql_unit_of_work_factory(url, secret_key="bench-secret-key-not-for-production")
        crawl = sql_crawl_store(url)
        clock = FixedClock()
        previous, audit_id = prepare(
            uow, crawl, clock, args.pages, args.links_per_page, site=not args.no_site, dense=args.dense
        )
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("ANALYZE")

        profiler = cProfile.Profile() if args.profile else None
        gc.collect()
        stages = trace_stages(args.pages) if args.trace else None
        memory = RssPeak().start()
        started, cpu_started = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.enable()
        audit = finalize.finalize_audit(audit_id, uow=uow(), crawl=crawl, clock=clock)
        if profiler is not None:
            profiler.disable()
        took, cpu_took = time.perf_counter() - started, time.process_time() - cpu_started
        memory.stop()
        if stages is not None:
            held, peak = tracemalloc.get_traced_memory()
            stages.append(
                f"  tracemalloc {'the rest (tasks, commit)':<24} held after {held / 2**20:6.1f} MB, peak during"
                f" {peak / 2**20:6.1f} MB ({peak / args.pages:5,.0f} B a page)"
            )
            tracemalloc.stop()
            print("\n".join(stages))
        assert audit.status is AuditStatus.DONE, audit.status
        tasks = 0
        if audit.site_id is not None:
            with uow() as work:
                tasks = len(work.tasks.of_site(audit.site_id))

        with psycopg.connect(dsn) as conn:
            floor_started = time.perf_counter()
            row = conn.execute("SELECT count(*) FROM crawl_links WHERE audit_id = %s", (audit_id,)).fetchone()
            floor = time.perf_counter() - floor_started
            assert row is not None
            links = int(row[0])
        report = crawl.report(audit_id)
        assert report is not None
        diff = report.diff
        assert diff is not None
        counts = report.issue_counts
        print(
            f"\nfinalising audit {audit_id}: {report.totals.pages:,} pages, {links:,} links, "
            f"{counts.error + counts.warning + counts.notice:,} issues, score {report.health_score}"
        )
        print(f"  diff against archived audit {previous}: new {diff.new:,}, fixed {diff.fixed:,}")
        print(
            f"  the site's fix tasks: {tasks:,}" if audit.site_id is not None else "  no site: no fix tasks"
        )
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"  machine load average (1, 5, 15 min) {load} on {os.cpu_count()} cores: figures scale with it"
        )
        print(f"finalize_audit      {took:8.2f} s   (target < 30 s: {'ok' if took < 30 else 'OVER'})")
        print(f"  of which this process's CPU {cpu_took:8.2f} s")
        grown = memory.peak_mb - memory.before_mb
        print(
            f"  peak RSS while finalising {memory.peak_mb:,.0f} MB, {grown:+,.0f} MB over the {memory.before_mb:,.0f} MB"
            f" before it ({grown * 2**20 / max(1, report.totals.pages):,.0f} bytes a page; sampled every 10 ms)"
        )
        print(f"SELECT count(*)     {floor:8.3f} s   over the audit's {links:,} link rows")
        ratio = took / floor
        print(f"ratio               {ratio:8.1f} x   (reported, not a target)")
        timings = report.stats.timings
        print(
            f"  of which site checks (one page pass, one link pass) {timings.site_checks_s:.2f} s, "
            f"templates and site issues stored {timings.templates_s:.2f} s, report the rest"
        )
        print("each port stream alone, consumed and dropped (what any finalisation through the ports pays):")
        for what, stream in (
            ("stream_pages", crawl.stream_pages),
            ("stream_urls", crawl.stream_urls),
            ("stream_links", crawl.stream_links),
            ("stream_issues", crawl.stream_issues),
            ("stream_site_pages", crawl.stream_site_pages),  # what finalisation reads instead
            ("stream_link_batches", crawl.stream_link_batches),
            ("stream_issue_lines", crawl.stream_issue_lines),
        ):
            streamed = time.perf_counter()
            cpu = time.process_time()
            rows = sum(len(x.sources) if isinstance(x, LinkBatch) else 1 for x in stream(audit_id))
            print(
                f"  {what:<19} {time.perf_counter() - streamed:8.2f} s  (CPU {time.process_time() - cpu:6.2f} s)"
                f"  {rows:>9,} rows"
            )
        if args.dump:
            dump(args.dump, uow, crawl, audit)
        if profiler is not None:
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
    finally:
        dispose_engines()
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def trace_stages(pages: int) -> list[str]:
    """Start tracemalloc and wrap each stage of the site checks (`_SiteRun`'s methods, the same in the
    code before and after a change) to note what is held after it and the peak during it; the lines are
    filled in as the stages run."""
    lines: list[str] = []
    run = site._SiteRun
    for name in (
        "_alias_redirect_targets",
        "_read_link_table",
        "_after_links",
        "_targets",
        "_duplicates",
        "_near_duplicates",
        "_host_files",
    ):
        original = getattr(run, name)

        def staged(self: Any, *args: Any, stage_name: str = name, stage: Any = original) -> Any:
            tracemalloc.reset_peak()
            out = stage(self, *args)
            held, peak = tracemalloc.get_traced_memory()
            lines.append(
                f"  tracemalloc {stage_name:<24} held after {held / 2**20:6.1f} MB ({held / pages:5,.0f} B a page),"
                f" peak during {peak / 2**20:6.1f} MB ({peak / pages:5,.0f} B a page)"
            )
            if stage_name == "_alias_redirect_targets":  # the pages are read: what they left
                for stat in tracemalloc.take_snapshot().statistics("lineno")[:8]:
                    lines.append(f"    {stat.size / pages:5,.0f} B a page  {stat.traceback[0]}")
            return out

        setattr(run, name, staged)

    def traced(owner: Any, name: str, label: str, top: int) -> None:
        """`owner.name` noting what is held after it and its peak, and its `top` largest allocations held
        at its end."""
        original = getattr(owner, name)

        def staged(*args: Any, **kwargs: Any) -> Any:
            tracemalloc.reset_peak()
            out = original(*args, **kwargs)
            held, peak = tracemalloc.get_traced_memory()
            lines.append(
                f"  tracemalloc {label:<24} held after {held / 2**20:6.1f} MB ({held / pages:5,.0f} B a page),"
                f" peak during {peak / 2**20:6.1f} MB ({peak / pages:5,.0f} B a page)"
            )
            for stat in tracemalloc.take_snapshot().statistics("lineno")[:top]:
                lines.append(f"    {stat.size / pages:5,.0f} B a page  {stat.traceback[0]}")
            tracemalloc.reset_peak()
            return out

        setattr(owner, name, staged)

    # The page templates, then the report's issue pass: what it holds at its end (the tally, the diff's
    # keys, the fix tasks' findings) beside the pages' columns.
    traced(finalize._PagePass, "templates", "templates", 0)
    traced(finalize, "build_report", "build_report", 12)
    tracemalloc.start()
    return lines


def dump(path: str, uow: Any, crawl: Any, audit: Audit) -> None:
    """What finalisation made, in a stable order: two runs of the same size compare line for line."""
    report = crawl.report(audit.id)
    with open(path, "w") as out:
        out.write(f"{evolve(report, stats=evolve(report.stats, timings=None))!r}\n")
        for line in sorted(repr(i) for _, i in crawl.stream_issues(audit.id)):
            out.write(line + "\n")
        for row in crawl.stream_page_rows(audit.id):
            out.write(f"{row.url} {row.template}\n")
        if audit.site_id is not None:
            with uow() as work:
                for task in sorted(work.tasks.of_site(audit.site_id), key=lambda t: t.key):
                    out.write(f"{task!r}\n")


def prepare(
    uow: Any, crawl: Any, clock: FixedClock, pages: int, links_per_page: int, *, site: bool, dense: bool
) -> tuple[AuditId, AuditId]:
    """An archived previous audit of the site (report and identities only) and the audit to finalise."""
    email = "bench@retro-clock.example"
    accounts.create_user(email, plan="scale", uow=uow(), clock=clock, secrets=SystemSecrets())
    accounts.create_team("Bench", owner_email=email, uow=uow(), clock=clock)
    accounts.grant_credits(email, credits(1_000_000), key="bench", uow=uow(), clock=clock)
    site_id = None
    if site:
        registered = Site.register(
            site_id=SiteId(0),
            team_id=TeamId(1),
            url=SITE + "/",
            verify_token="bench_verify_token_0123456789",
            crawler_secret_ref="bench-crawler-ref",
            plan_page_limit=pages + 10,
            now=clock.now(),
            max_pages=pages + 10,
        )
        with uow() as work:
            site_id = work.sites.add(registered.verify(VerifyMethod.FILE, now=clock.now())[0]).id
            work.commit()
    made = []
    for _ in range(2):
        with uow() as work:
            audit = work.audits.add(
                Audit(
                    id=AuditId(0),
                    team_id=TeamId(1),
                    user_id=UserId(1),
                    payer_id=UserId(1),
                    url=SITE + "/",
                    origin=SITE,
                    site_id=site_id,
                    created_at=clock.now(),
                    max_pages=pages + 10,
                    credits_reserved=credits(pages + 10),
                )
            )
            work.credits.reserve(
                UserId(1), credits(pages + 10), reference=audits.audit_reference(audit.id), at=clock.now()
            )
            work.commit()
        made.append(audit.id)
        audits.begin_audit(audit.id, uow=uow(), clock=clock)
    previous, current = made

    # The previous audit: a tenth of the site, finalised, then archived (its identities kept beside its report).
    print(f"writing the previous audit ({pages // 10:,} pages) ...", flush=True)
    write_site(crawl, previous, pages // 10, links_per_page, dense=dense)
    audits.record_progress(previous, pages_crawled=pages // 10, pages_not_modified=0, uow=uow(), clock=clock)
    audits.stop_crawling(previous, partial=False, uow=uow(), clock=clock)
    finalize.finalize_audit(previous, uow=uow(), crawl=crawl, clock=clock)
    clock.advance(timedelta(days=40).total_seconds())
    archived = archival.archive_audits(
        uow=uow(), crawl=crawl, clock=clock, older_than_days=30, keep_last=None
    )
    assert archived == [previous], archived

    print(f"writing the audit to finalise ({pages:,} pages, {links_per_page} links a page) ...", flush=True)
    started = time.perf_counter()
    written = write_site(crawl, current, pages, links_per_page, dense=dense)
    print(
        f"  {written[0]:,} pages, {written[1]:,} links, {written[2]:,} issues in "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    audits.record_progress(current, pages_crawled=pages, pages_not_modified=0, uow=uow(), clock=clock)
    audits.stop_crawling(current, partial=False, uow=uow(), clock=clock)
    clock.advance(3_600)
    return previous, current


if __name__ == "__main__":
    main()
