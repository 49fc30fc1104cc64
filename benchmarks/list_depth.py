"""Deep pages of an audit's REST lists on PostgreSQL: `GET /crawls/{id}/pages` and `/issues` at depth.

    python benchmarks/list_depth.py [--pages 100000] [--issues-per-page 3.5] [--rounds 20] [--no-analyze]
        [--no-template-marks] [--other-audits N] [--old-template-predicate]

Creates a database of its own (random name) on SITEAUDIT_BENCH_POSTGRES_URL (default: the local server,
user postgres), migrates it, and drops it at the end. One audit's pages and issues (the generators of
`bulk_rows.py`) are written through the project's SQL crawl store, then sealed as finalisation leaves
them: templates assigned, totals counted and (unless `--no-analyze`) the crawl tables analysed. Then the
store's `list_pages` and `list_issues` (the queries behind the REST lists, 50 rows a page) are timed at
the first, middle and last page, unfiltered and with each filter the REST contract allows, `--rounds`
times each. Prints p50 and p99 per list and depth. Target: p99 < 100 ms at 500,000 pages.
`--no-template-marks` then deletes the audit's `crawl_issue_template_marks` and times the template-filtered
list again, side by side in the same run: its deep pages as they were before those marks.
`--other-audits N` stores N other audits' templates and issues beside the measured one (copies of its
rows under other audit ids, INSERT ... SELECT), as a database holding many audits does.
`--old-template-predicate` then times the template-filtered lists again through a second store whose
"not assigned" test is the one before it was bound to the audit (correlated on the issue's audit
alone), side by side in the same run.
"""

import argparse
import os
import secrets
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from bulk_rows import SITE, T0, batches, make_issues, make_page  # a sibling script
from psycopg import sql
from sqlalchemy import and_, delete, exists, or_, select, text

from siteaudit.adapters.sql import SqlCrawlStore, SqlUnitOfWork, crawl, migrate
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.tables import crawl_issue_template_marks, crawl_issues, crawl_templates
from siteaudit.domain.account import Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.issue import Severity
from siteaudit.ports.crawl import IssueQuery, PageQuery

ADMIN_URL = os.environ.get("SITEAUDIT_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
PER_PAGE = 50
TEMPLATES = ("/products/[slug]", "/products/[slug]/[slug]", "/blog/[slug]")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def template_pages(store: SqlCrawlStore, audit_id: AuditId, template: str) -> Callable[..., Any]:
    """The issues of one template, a page at the offset `timed` gives."""
    return lambda offset: store.list_issues(
        audit_id, IssueQuery(template=template, offset=offset, limit=PER_PAGE)
    )


def timed(label: str, total: int, fetch: Callable[..., Any], rounds: int) -> float:
    """Print p50 and p99 of `rounds` reads of the first, middle and last page of a list; the worst p99."""
    last = max(0, (total - 1) // PER_PAGE * PER_PAGE)
    worst = 0.0
    for depth, offset in (("first", 0), ("middle", last // 2 // PER_PAGE * PER_PAGE), ("last", last)):
        fetch(offset=offset)  # warm
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            fetch(offset=offset)
            times.append((time.perf_counter() - t) * 1000)
        p99 = percentile(times, 0.99)
        worst = max(worst, p99)
        print(
            f"{label:<42} {total:>9,} {depth:>7} {offset:>9,} {statistics.median(times):>8.1f} {p99:>8.1f}",
            flush=True,
        )
    return worst


def old_has_template(audit_id: Any, template: Any) -> Any:
    """`_has_template` before its "not assigned" test was bound to the audit: correlated on the issue's
    audit alone, which PostgreSQL hashed over every audit's `crawl_templates` rows."""
    templates, issues = crawl_templates, crawl_issues
    assigned = select(templates.c.url_id).where(
        templates.c.audit_id == audit_id, templates.c.template == template
    )
    unassigned = ~exists().where(
        templates.c.audit_id == issues.c.audit_id, templates.c.url_id == issues.c.url_id
    )
    return or_(issues.c.url_id.in_(assigned), and_(issues.c.template == template, unassigned))


@contextmanager
def old_template_predicate(store: SqlCrawlStore) -> Iterator[None]:
    """While it lasts, `store`'s template-filtered lists (first page and deep) use `old_has_template`."""
    current = crawl._has_template
    assert store._first_issues is not None
    store._first_issues.has_template = old_has_template  # a store of its own: its statements compile anew
    crawl._has_template = old_has_template  # type: ignore[assignment]
    try:
        yield
    finally:
        crawl._has_template = current


def copy_to_other_audits(engine: Any, audit_id: int, count: int) -> None:
    """Store `count` other audits' templates and issues: the measured audit's rows under new audit ids."""
    with engine.begin() as conn:
        for table, columns in (
            ("crawl_templates", "url_id, template"),
            ("crawl_issues", "url_id, check_code, severity, template, details"),
        ):
            conn.execute(
                text(
                    f"INSERT INTO {table} (audit_id, {columns}) SELECT other, {columns}"
                    f" FROM {table}, generate_series(CAST(:first AS integer), :last) AS other WHERE audit_id = :audit"
                ),
                {"audit": audit_id, "first": audit_id + 1, "last": audit_id + count},
            )
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM (ANALYZE) crawl_templates, crawl_issues"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--issues-per-page", type=float, default=3.5)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--no-analyze", action="store_true", help="leave the crawl tables unanalysed")
    parser.add_argument("--keep", action="store_true", help="keep the database (its name is printed)")
    parser.add_argument(
        "--no-template-marks",
        action="store_true",
        help="then time the template-filtered list again without its marks (the list before them)",
    )
    parser.add_argument(
        "--other-audits",
        type=int,
        default=0,
        help="store this many other audits' templates and issues (copies of the measured audit's)",
    )
    parser.add_argument(
        "--old-template-predicate",
        action="store_true",
        help="then time the template-filtered lists again with the template test as it was before",
    )
    args = parser.parse_args()

    name = f"siteaudit_bench_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
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
            audit = uow.audits.add(
                Audit(AuditId(0), team.id, owner.id, owner.id, f"{SITE}/", SITE, T0, 500_000)
            )
            uow.commit()
        store = SqlCrawlStore(engine)
        started = time.perf_counter()
        rate = args.issues_per_page
        issues = 0
        for chunk in batches(range(args.pages), 2_000):
            pages = [make_page(i, 0) for i in chunk]
            store.write_pages(audit.id, pages)
            rows = [
                issue
                for i, p in zip(chunk, pages, strict=True)
                for issue in make_issues(p, int((i + 1) * rate) - int(i * rate), i)
            ]
            issues += store.write_issues(audit.id, rows)
        ids = store.intern(audit.id, [make_page(i, 0).url for i in range(0, args.pages, 7)])
        store.assign_templates(audit.id, ((u, TEMPLATES[u % 3]) for u in ids.values()))
        sealing = time.perf_counter()
        store.seal_counts(audit.id)
        written = time.perf_counter()
        analyse = getattr(store, "refresh_statistics", None)  # finalisation's last step (absent before)
        if not args.no_analyze and analyse is not None:
            analyse(audit.id)
        refreshed = time.perf_counter()
        print(
            f"{args.pages:,} pages, {issues:,} issues written in {sealing - started:.0f} s; "
            f"seal_counts {written - sealing:.2f} s; "
            + (
                f"refresh_statistics {refreshed - written:.2f} s"
                if analyse and not args.no_analyze
                else "not analysed"
            ),
            flush=True,
        )

        if args.other_audits:
            copying = time.perf_counter()
            copy_to_other_audits(engine, audit.id, args.other_audits)
            print(
                f"{args.other_audits} other audits' templates and issues copied in "
                f"{time.perf_counter() - copying:.1f} s",
                flush=True,
            )

        total_issues = store.list_issues(audit.id, IssueQuery(limit=1))[1]
        cases: list[tuple[str, int, Callable[..., Any]]] = [
            (
                "pages",
                args.pages,
                lambda offset: store.list_pages(audit.id, PageQuery(offset=offset, limit=PER_PAGE)),
            ),
            (
                "pages status_code=404",
                store.list_pages(audit.id, PageQuery(status_code=404, limit=1))[1],
                lambda offset: store.list_pages(
                    audit.id, PageQuery(status_code=404, offset=offset, limit=PER_PAGE)
                ),
            ),
            (
                "issues",
                total_issues,
                lambda offset: store.list_issues(audit.id, IssueQuery(offset=offset, limit=PER_PAGE)),
            ),
            (
                "issues severity=warning",
                store.list_issues(audit.id, IssueQuery(severity=Severity.WARNING, limit=1))[1],
                lambda offset: store.list_issues(
                    audit.id, IssueQuery(severity=Severity.WARNING, offset=offset, limit=PER_PAGE)
                ),
            ),
            (
                "issues check=missing_alt",
                store.list_issues(audit.id, IssueQuery(check_code="missing_alt", limit=1))[1],
                lambda offset: store.list_issues(
                    audit.id, IssueQuery(check_code="missing_alt", offset=offset, limit=PER_PAGE)
                ),
            ),
            *(
                (
                    "issues template=" + template,
                    store.list_issues(audit.id, IssueQuery(template=template, limit=1))[1],
                    template_pages(store, audit.id, template),
                )
                # most issues (their pages were written with it), and a twentieth (assigned at finalisation)
                for template in (TEMPLATES[1], TEMPLATES[2])
            ),
        ]
        print(f"\n{'list':<42} {'rows':>9} {'depth':>7} {'offset':>9} {'p50 ms':>8} {'p99 ms':>8}")
        worst = max(timed(label, total, fetch, args.rounds) for label, total, fetch in cases)
        print(f"\nworst list page p99: {worst:.1f} ms (target < 100 ms)")
        if args.old_template_predicate:
            before = SqlCrawlStore(engine)
            for template in (TEMPLATES[1], TEMPLATES[2]):  # now, then before, one beside the other
                total = store.list_issues(audit.id, IssueQuery(template=template, limit=1))[1]
                timed(
                    f"template={template} now",
                    total,
                    template_pages(store, audit.id, template),
                    args.rounds,
                )
                with old_template_predicate(before):
                    timed(
                        f"template={template} old test",
                        total,
                        template_pages(before, audit.id, template),
                        args.rounds,
                    )
        if args.no_template_marks:
            with engine.begin() as conn:
                conn.execute(
                    delete(crawl_issue_template_marks).where(
                        crawl_issue_template_marks.c.audit_id == audit.id
                    )
                )
            for label, total, fetch in cases[-2:]:
                timed(label + " (no marks)", total, fetch, args.rounds)
    finally:
        engine.dispose()
        if args.keep:
            print(f"kept database {name}")
        else:
            with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


if __name__ == "__main__":
    main()
