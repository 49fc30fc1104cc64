"""Bulk crawl rows on PostgreSQL: the project's CrawlStore against a plain psycopg COPY of the same rows.

    python benchmarks/bulk_rows.py [--pages 100000] [--issues-per-page 3] [--links-per-page 5]

Creates a database of its own (random name) on SITEAUDIT_BENCH_POSTGRES_URL (default: the local server,
user postgres), migrates it, and drops it at the end. For one audit the project path writes pages, issues
and links from domain values (PageFacts, Issue, Link: interning URLs, converting, COPY in batches of
1,000 pages); for a second audit a plain COPY writes the very same rows, already converted, into the same
tables. Prints rows/s for both, the ratio (target >= 50% for pages+issues), and the on-disk bytes per row
(pg_total_relation_size / rows, indexes included; target for a link row: about 120 bytes at most).
"""

import argparse
import json
import os
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import sql

from siteaudit.adapters.sql import SqlCrawlStore, SqlUnitOfWork, migrate
from siteaudit.adapters.sql.crawl import ISSUE_COLUMNS, LINK_COLUMNS, LINK_KIND_CODES, PAGE_COLUMNS, url_key
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.page import page_values
from siteaudit.domain.account import Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.facts import HtmlFacts, Image, JsonLdBlock, Link, PageFacts
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.issue import Issue, Severity

ADMIN_URL = os.environ.get("SITEAUDIT_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
SITE = "https://retro-clock.example"
T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
CHECKS = [
    ("title_too_long", Severity.WARNING),
    ("missing_alt", Severity.NOTICE),
    ("broken_link", Severity.ERROR),
    ("thin_content", Severity.WARNING),
]


def url(i: int) -> str:
    return f"{SITE}/products/category-{i % 97}/retro-clock-model-{i}"


def make_page(i: int, links: int) -> PageFacts:
    html = HtmlFacts(
        titles=(f"Retro clock model {i} | Retro Clock",),
        meta_descriptions=(f"A fine retro clock, model {i}, restored by hand and shipped worldwide.",),
        h1s=(f"Retro clock model {i}",),
        heading_levels=(1, 2, 2, 3),
        lang="en",
        viewport="width=device-width, initial-scale=1",
        meta_charset="utf-8",
        open_graph=frozenset({"og:title", "og:image", "og:description"}),
        json_ld=(JsonLdBlock(True, True, True, ("Product",)),),
        links=tuple(Link(url((i + k + 1) % 100_000)) for k in range(links)),
        images=(Image(f"{SITE}/img/{i}.jpg", has_alt=i % 5 != 0, width="640", height="480"),),
        word_count=350 + i % 400,
        text_chars=2_000 + i % 3_000,
        fingerprint=f"{i * 2654435761 % 2**64:016x}",
        sketch=tuple((i * 31 + k * 17) % 2**32 for k in range(16)),
        dom_nodes=400 + i % 300,
    )
    return PageFacts(
        url=url(i),
        depth=1 + i % 5,
        status_code=404 if i % 50 == 0 else 200,
        content_type="text/html",
        charset="utf-8",
        headers=(("server", "nginx"), ("cache-control", "max-age=600")),
        bytes=40_000 + i % 20_000,
        ttfb_ms=40 + i % 100,
        total_ms=90 + i % 200,
        etag=f'"{i:x}"',
        in_sitemap=i % 3 != 0,
        html=html,
    )


def make_issues(page: PageFacts, per_page: int, i: int) -> list[Issue]:
    return [
        Issue(code, severity, page.url, "/products/[slug]/[slug]", {"length": 70 + (i + k) % 30, "n": k})
        for k, (code, severity) in enumerate(CHECKS[(i + k) % len(CHECKS)] for k in range(per_page))
    ]


def batches(values: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def timed(action: Callable[[], None]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def raw_copy(dsn: str, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> float:
    def run() -> None:
        with psycopg.connect(dsn) as conn, conn.cursor() as cursor:
            with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            conn.commit()

    return timed(run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--issues-per-page", type=int, default=3)
    parser.add_argument("--links-per-page", type=int, default=5)
    args = parser.parse_args()

    name = f"siteaudit_bench_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    dsn = psycopg.conninfo.make_conninfo(ADMIN_URL, dbname=name)
    password = f":{info['password']}" if info.get("password") else ""
    url_sa = (
        f"postgresql+psycopg://{info.get('user', 'postgres')}{password}@{info.get('host', '127.0.0.1')}"
        f":{info.get('port', 5432)}/{name}"
    )
    engine = create_engine(url_sa)
    try:
        migrate(engine)
        with SqlUnitOfWork(engine) as uow:
            owner = uow.users.add(User(UserId(0), "bench@retro-clock.example", "scale", T0))
            team = uow.teams.add(Team(TeamId(0), "Bench", owner.id, T0))
            made = [
                uow.audits.add(Audit(AuditId(0), team.id, owner.id, owner.id, f"{SITE}/", SITE, T0, 500_000))
                for _ in range(2)
            ]
            uow.commit()
        project, plain = made[0].id, made[1].id

        print(f"generating {args.pages:,} pages ...", flush=True)
        pages = [make_page(i, args.links_per_page) for i in range(args.pages)]
        issues = [issue for i, p in enumerate(pages) for issue in make_issues(p, args.issues_per_page, i)]
        links = [(p.url, link) for p in pages for link in (p.html.links if p.html else ())]

        # The same rows, converted beforehand (not timed), for the plain COPY.
        ids = {p.url: n for n, p in enumerate(pages, start=1)}
        for _, link in links:
            ids.setdefault(link.target, len(ids) + 1)
        url_rows = [(plain, i, url_key(u), u) for u, i in ids.items()]
        page_rows = []
        for p in pages:
            values = page_values(p, template="")
            for column, value in values.items():  # the JSON columns (`facts`, `site`) as COPY text
                if isinstance(value, dict | list):
                    values[column] = json.dumps(value, separators=(",", ":"))
            page_rows.append((plain, ids[p.url], *(values[c] for c in PAGE_COLUMNS[2:])))
        issue_rows = [
            (plain, ids[i.url], i.check_code, i.severity.rank, i.template, json.dumps(dict(i.details)))
            for i in issues
        ]
        link_rows = [
            (plain, ids[s], ids[k.target], LINK_KIND_CODES[k.kind], k.nofollow, k.internal) for s, k in links
        ]

        # Each project step right before its plain COPY, so a change of load on a shared machine hits
        # both sides of a ratio alike.
        store = SqlCrawlStore(engine)
        r_urls = raw_copy(dsn, "crawl_urls", ("audit_id", "id", "key", "url"), url_rows)
        t_pages = timed(lambda: [store.write_pages(project, b) for b in batches(pages, 1_000)] and None)
        r_pages = raw_copy(dsn, "crawl_pages", PAGE_COLUMNS, page_rows)
        t_issues = timed(lambda: [store.write_issues(project, b) for b in batches(issues, 3_000)] and None)
        r_issues = raw_copy(dsn, "crawl_issues", ISSUE_COLUMNS, issue_rows)
        t_links = timed(lambda: [store.write_links(project, b) for b in batches(links, 5_000)] and None)
        r_links = raw_copy(dsn, "crawl_links", LINK_COLUMNS, link_rows)
        # The project interns URLs while it writes pages and links; charge the URL rows' COPY likewise.
        r_urls_pages = r_urls * len(pages) / len(ids)
        r_urls_links = r_urls - r_urls_pages

        with psycopg.connect(dsn) as conn:
            sizes = {
                t: conn.execute(f"SELECT pg_total_relation_size('{t}'), count(*) FROM {t}").fetchone()
                for t in ("crawl_pages", "crawl_issues", "crawl_links", "crawl_urls")
            }

        def line(what: str, rows: int, ours: float, theirs: float) -> None:
            print(
                f"{what:<12} {rows:>9,} rows | project {rows / ours:>10,.0f} rows/s | plain COPY "
                f"{rows / theirs:>10,.0f} rows/s | ratio {theirs / ours:6.1%}"
            )

        print(f"\nPostgreSQL bulk rows, one audit ({args.pages:,} pages), batches of 1,000 pages")
        line("pages", len(pages), t_pages, r_pages + r_urls_pages)
        line("issues", len(issues), t_issues, r_issues)
        line("links", len(links), t_links, r_links + r_urls_links)
        line("pages+issues", len(pages) + len(issues), t_pages + t_issues, r_pages + r_urls_pages + r_issues)
        total_rows = len(pages) + len(issues) + len(links)
        line("all", total_rows, t_pages + t_issues + t_links, r_pages + r_issues + r_links + r_urls)
        print("\non disk (pg_total_relation_size / rows, indexes included):")
        for table, (size, rows) in sizes.items():
            print(f"  {table:<13} {size / rows:7.1f} bytes/row  ({rows:,} rows, {size / 2**20:,.1f} MiB)")
        link_bytes = sizes["crawl_links"][0] / sizes["crawl_links"][1]
        verdict = "ok" if link_bytes <= 120 else "OVER"
        print(f"  link row: {link_bytes:.1f} bytes, target <= ~120: {verdict}")
    finally:
        engine.dispose()
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


if __name__ == "__main__":
    main()
