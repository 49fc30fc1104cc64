# Over 500 lines: the CrawlStore port's one SQL implementation (frontier, pages, links, issues, reports); each method is one statement or batch.
"""The SQL crawl store: an audit's bulk rows, written in batches (COPY on PostgreSQL, executemany on SQLite).

Every public method is one transaction. Writes on PostgreSQL go through psycopg's COPY on the transaction's
own connection, so a batch still commits or rolls back whole. URLs are interned under a per-audit advisory
lock on PostgreSQL (the SQLite transaction already holds the single write lock), so two writers of one audit
can never give one URL two ids.

Interned ids never change once committed (until the audit's rows are archived), so the store remembers
recent audits' committed URL ids in a bounded cache: a batch whose URLs are all known (the link targets of
pages just written, the URLs of issues) skips hashing, probing and the interning lock.
"""

import hashlib
import itertools
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any, Final

import orjson
from attrs import evolve
from sqlalchemy import (
    Connection,
    Engine,
    Table,
    and_,
    bindparam,
    case,
    delete,
    exists,
    false,
    func,
    insert,
    literal,
    or_,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql.elements import ColumnElement

from siteaudit.adapters.report_json import report_from_json, report_json
from siteaudit.adapters.sql.dialect import dialect_insert, insert_ignoring_conflicts
from siteaudit.adapters.sql.engine import READ_ONLY, engine_for, is_sqlite
from siteaudit.adapters.sql.firstpage import FirstIssuePage
from siteaudit.adapters.sql.page import page_from_row, page_values, site_page, summary_from_row
from siteaudit.adapters.sql.tables import (
    crawl_checkpoints,
    crawl_extracts,
    crawl_frontier,
    crawl_frontier_counts,
    crawl_issue_counts,
    crawl_issue_marks,
    crawl_issue_template_marks,
    crawl_issues,
    crawl_links,
    crawl_page_counts,
    crawl_pages,
    crawl_reports,
    crawl_templates,
    crawl_urls,
)
from siteaudit.domain.checks.site import LINK_KINDS, LinkBatch, link_flags
from siteaudit.domain.diff import ArchivedIdentities
from siteaudit.domain.extraction import Extracted, ExtractMatch
from siteaudit.domain.facts import Link, LinkKind, PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.domain.issue import Issue, Severity
from siteaudit.domain.report import Report
from siteaudit.ports.crawl import (
    FrontierEntry,
    FrontierState,
    IssueLine,
    IssueQuery,
    LinkLine,
    LinkRow,
    PageQuery,
    PageRow,
    StoredPage,
    first_quote,
)

# Explicit and stable: these numbers are on disk.
LINK_KIND_CODES: Final[Mapping[LinkKind, int]] = {
    LinkKind.A: 0,
    LinkKind.IMG: 1,
    LinkKind.LINK: 2,
    LinkKind.SCRIPT: 3,
    LinkKind.CANONICAL: 4,
    LinkKind.HREFLANG: 5,
}
LINK_KIND_OF: Final[Mapping[int, LinkKind]] = {code: kind for kind, code in LINK_KIND_CODES.items()}
# The stored kind codes are the kinds' indexes in `LINK_KINDS`, so `LinkBatch.flags` are computed in SQL.
assert all(LINK_KINDS[code] is kind for kind, code in LINK_KIND_CODES.items())
SEVERITIES: Final[Mapping[int, Severity]] = {s.rank: s for s in Severity}

_INTERN_LOCK: Final = 0x5174_C0DE  # advisory lock class for URL interning (the audit id is the object)
_CHUNK: Final = 2_000  # rows per statement or COPY chunk
_LOOKUP_CHUNK_SQLITE: Final = 500  # bound parameters per IN (...) on SQLite
_STREAM_CHUNK: Final = 1_000
_LINK_BATCH: Final = 65_536  # links per `LinkBatch` (SQLite)
_LINK_SOURCES: Final = 8_192  # source ids per `LinkBatch` (PostgreSQL)
_URL_IDS: Final = 65_536
_URL_RANGE: Final = (
    "SELECT array_agg(id), array_agg(url) FROM (SELECT id, url FROM crawl_urls"
    " WHERE audit_id = %s AND id >= %s AND id < %s ORDER BY id) AS u"
)
_LINK_RANGE: Final = (
    "SELECT array_agg(source_id), array_agg(target_id), array_agg(flags) FROM ("
    " SELECT source_id, target_id, (kind * 4 + internal::int * 2 + nofollow::int)::int2 AS flags"
    " FROM crawl_links WHERE audit_id = %s AND source_id >= %s AND source_id < %s ORDER BY source_id) AS l"
)
# The URL-id cache: this many URLs per audit (least recently used go first), for this many audits.
URL_CACHE_PER_AUDIT: Final = 100_000
URL_CACHE_AUDITS: Final = 4

_PROBE_URLS: Final = text(
    "SELECT u.key, u.id, u.url FROM unnest(CAST(:keys AS bigint[])) AS k(key)"
    " JOIN LATERAL (SELECT id, key, url FROM crawl_urls WHERE audit_id = :audit AND key = k.key) AS u ON true"
)

_SQLITE_FRONTIER_STATES: Final = text(
    "SELECT url_id, state FROM crawl_frontier INDEXED BY sqlite_autoindex_crawl_frontier_1"
    " WHERE audit_id = :audit_id AND url_id IN :ids"
).bindparams(bindparam("ids", expanding=True))

PAGE_COLUMNS: Final = tuple(c.name for c in crawl_pages.columns)
ISSUE_COLUMNS: Final = ("audit_id", "url_id", "check_code", "severity", "template", "details")
LINK_COLUMNS: Final = tuple(c.name for c in crawl_links.columns)
LINK_TYPES: Final = ("integer", "integer", "integer", "smallint", "boolean", "boolean")
URL_COLUMNS: Final = ("audit_id", "id", "key", "url")
TEMPLATE_COLUMNS: Final = ("audit_id", "url_id", "template")
EXTRACT_COLUMNS: Final = tuple(c.name for c in crawl_extracts.columns)


def extract_rows(audit_id: AuditId, url_id: int, page: PageFacts) -> Iterator[tuple[Any, ...]]:
    """The `crawl_extracts` rows of one page: a row per value, or one without a value for a rule that
    read nothing (docs/extraction.md)."""
    for rule, found in enumerate(page.extracted):
        if not found.values:
            yield (audit_id, url_id, rule, 0, found.name, None)
        for position, value in enumerate(found.values):
            yield (audit_id, url_id, rule, position, found.name, value)


def extracted_of(rows: Iterable[Any]) -> tuple[Extracted, ...]:
    """One page's values back from its `crawl_extracts` rows, in (rule, position) order."""
    found: list[Extracted] = []
    for row in rows:
        if not found or found[-1].name != row.name:
            found.append(Extracted(row.name, ()))
        if row.value is not None:
            found[-1] = Extracted(row.name, (*found[-1].values, row.value))
    return tuple(found)


def _extract_condition(match: ExtractMatch) -> ColumnElement[bool]:
    """Pages whose rule `match.name` read `match.value`, or anything when it is None."""
    condition = and_(
        crawl_extracts.c.audit_id == crawl_pages.c.audit_id,
        crawl_extracts.c.url_id == crawl_pages.c.url_id,
        crawl_extracts.c.name == match.name,
        crawl_extracts.c.value.is_not(None) if match.value is None else crawl_extracts.c.value == match.value,
    )
    return exists(select(literal(1)).where(condition))


def _template_of(table: Table) -> Any:
    """A page's or issue's template: the one finalisation assigned to its URL, else the one it was written
    with. A scalar subquery (one primary-key probe per row) rather than a join: `crawl_templates` fills
    up all at once at finalisation, so its statistics are often stale, and a join planned on them can be
    a nested loop over every template of the audit for every row."""
    assigned = (
        select(crawl_templates.c.template)
        .where(crawl_templates.c.audit_id == table.c.audit_id, crawl_templates.c.url_id == table.c.url_id)
        .correlate(table)
        .scalar_subquery()
    )
    return func.coalesce(assigned, table.c.template)


def _sealed_total(table: Table, marker: Any, audit_id: Any, *filters: Any) -> Any:
    """The total of the rows matching `filters` from an audit's sealed counts, NULL when never sealed:
    a scalar subquery, so a listing reads its page of rows and its total in one statement."""
    return (
        select(
            case(
                (
                    func.count().filter(marker) > 0,
                    # `marker IS NOT TRUE`, not `NOT marker`: a NULL status is a counted row, not a marker.
                    func.coalesce(func.sum(table.c.count).filter(marker.isnot(True), *filters), 0),
                )
            )
        )
        .where(table.c.audit_id == audit_id)
        .scalar_subquery()
    )


def _has_template(audit_id: Any, template: Any) -> Any:
    """Issues whose template (as `_template_of` reads it) is `template` (a value or a bound parameter),
    without a probe per row: the URLs finalisation gave that template, plus the issues of URLs it gave
    none that were written with it.
    (PostgreSQL hashes the first set once; comparing `_template_of` probed `crawl_templates` for every
    issue of the audit, 0.4-0.6 s for 165,000 issues.)"""
    templates, issues = crawl_templates, crawl_issues
    assigned = select(templates.c.url_id).where(
        templates.c.audit_id == audit_id, templates.c.template == template
    )
    # The audit itself, not `issues.audit_id`: correlated on the issue's column alone, PostgreSQL hashed
    # the anti-join over every audit's `crawl_templates` rows, so each page slowed as audits were stored.
    unassigned = ~exists().where(templates.c.audit_id == audit_id, templates.c.url_id == issues.c.url_id)
    return or_(issues.c.url_id.in_(assigned), and_(issues.c.template == template, unassigned))


def _marks(
    audit_id: AuditId, table: Table, group: dict[str, Any], source: Any, every: int, *filters: Any
) -> Any:
    """The rows of a marks table (`crawl_issue_marks`, `crawl_issue_template_marks`) for a sealed audit: every
    `every`th of the audit's issues in `source` of each group (`group`: the table's column -> its value),
    in the issues list's order, with its ordinal in its group."""
    issues = crawl_issues.c
    ordinal = func.row_number().over(partition_by=tuple(group.values()), order_by=(issues.url_id, issues.id))
    ranked = (
        select(
            *(value.label(name) for name, value in group.items()),
            ordinal.label("ordinal"),
            issues.url_id,
            issues.id,
        )
        .select_from(source)
        .where(issues.audit_id == audit_id, *filters)
        .subquery()
    )
    return insert(table).from_select(
        ["audit_id", *group, "ordinal", "url_id", "issue_id"],
        select(
            literal(audit_id),
            *(ranked.c[name] for name in group),
            ranked.c.ordinal - 1,
            ranked.c.url_id,
            ranked.c.id,
        ).where(ranked.c.ordinal > every, (ranked.c.ordinal - 1) % every == 0),
    )


# The tables the REST lists read, which finalisation vacuums and analyses (`refresh_statistics`).
# Every how many issues of a (severity, check) group a sealed audit keeps a mark (`crawl_issue_marks`): the
# most index entries a deep page of the issues list walks before its rows (about 3 ms).
ISSUE_MARK_EVERY: Final = 10_000
# Every how many issues of a (template, severity, check) group it keeps a mark (`crawl_issue_template_marks`),
# for the list filtered by template: far fewer than `ISSUE_MARK_EVERY`, as the walk from such a mark also
# passes the group's issues of other templates. At 100, a template down to a thirtieth of its group keeps
# the walk within `PROBED_WALK` (one mark per 100 issues: 17,500 rows for 1,750,000 issues).
TEMPLATE_MARK_EVERY: Final = 100
# The most issues a deep page filtered by template may expect to walk from its mark and still test each
# issue's template with a probe (`_template_of`) rather than the hashed sets of `_has_template`, whose
# building costs the same at any depth (500,000 pages: 40 ms to hash an audit's 71,000 assigned URLs).
PROBED_WALK: Final = 5_000
_LISTED_TABLES: Final = ("crawl_pages", "crawl_issues", "crawl_urls", "crawl_templates")
_COUNTED: Final = ""  # check code of the row that marks an audit's issues as counted
_PAGES_COUNTED: Final = 0  # status code of the row that marks an audit's pages as counted

PAGE_TEMPLATE: Final = _template_of(crawl_pages).label("template")
# Whether robots.txt disallowed the page (`PageRow.excluded_by`): a key of the `site` document, or of
# `facts` on rows written before `site` existed; left out of both when false.
PAGE_DISALLOWED: Final = func.coalesce(
    crawl_pages.c.site["disallowed"].as_boolean(), crawl_pages.c.facts["disallowed"].as_boolean(), false()
).label("disallowed")
ISSUE_TEMPLATE: Final = _template_of(crawl_issues).label("template")
# Rows of the site checks' projection of a page (`stream_site_pages`), as binary COPY sends them.
_SITE_PAGE_IDS: Final = 8_192
_SITE_PAGES: Final = (
    "SELECT array_agg(url_id), array_agg(url), array_agg(template), array_agg(depth), array_agg(status_code),"
    " array_agg(fetch_error), array_agg(content_type), array_agg(blocked_by), array_agg(in_sitemap),"
    " array_agg(site), array_agg(sketch), array_agg(facts), array_agg(word_count) FROM ("
    " SELECT p.url_id, u.url, p.template, p.depth, p.status_code, p.fetch_error::text AS fetch_error,"
    " p.content_type::text AS content_type, p.blocked_by::text AS blocked_by, p.in_sitemap,"
    " p.site::text AS site, p.sketch, CASE WHEN p.site IS NULL THEN p.facts::text END AS facts, p.word_count"
    " FROM crawl_pages AS p JOIN crawl_urls AS u ON u.audit_id = p.audit_id AND u.id = p.url_id"
    " WHERE p.audit_id = %s AND p.url_id >= %s AND p.url_id < %s ORDER BY p.url_id) AS p"
)
_ISSUE_LINES: Final = 32_768
_ISSUE_RANGE: Final = (
    "SELECT array_agg(id), array_agg(url_id), array_agg(url), array_agg(check_code), array_agg(severity),"
    " array_agg(template), array_agg(details) FROM ("
    " SELECT i.id, i.url_id, u.url, i.check_code::text AS check_code, i.severity, i.template, {details} AS details"
    " FROM crawl_issues AS i JOIN crawl_urls AS u ON u.audit_id = i.audit_id AND u.id = i.url_id"
    " WHERE i.audit_id = %s AND i.id > %s ORDER BY i.id LIMIT %s) AS i"
)


def url_key(url: str) -> int:
    """64 bits of the URL's BLAKE2b digest, as a signed BIGINT: what the unique index holds."""
    return int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "big", signed=True)


def _chunks(values: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(values)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def issue_from_row(row: Any) -> Issue:
    return Issue(
        check_code=row.check_code,
        severity=SEVERITIES[row.severity],
        url=row.url,
        template=row.template,
        details=row.details,
    )


def link_from_row(row: Any) -> LinkRow:
    return LinkRow(row.source_id, row.target_id, LINK_KIND_OF[row.kind], row.nofollow, row.internal)


class UrlIdCache:
    """Committed URL ids of the most recent audits, bounded per audit and in audits. Thread-safe.

    Only ids whose transaction committed are remembered (see `SqlCrawlStore._interning`): an id from a
    rolled-back batch would point at no row.
    """

    def __init__(self, per_audit: int = URL_CACHE_PER_AUDIT, audits: int = URL_CACHE_AUDITS) -> None:
        self._per_audit = per_audit
        self._audits = audits
        self._ids: OrderedDict[AuditId, OrderedDict[str, int]] = OrderedDict()
        self._lock = threading.Lock()

    def known(self, audit_id: AuditId, urls: Iterable[str]) -> tuple[dict[str, int], list[str]]:
        """The cached ids of `urls`, and the URLs (unique, in first-seen order) not cached."""
        found: dict[str, int] = {}
        missing: dict[str, None] = {}
        with self._lock:
            ids = self._ids.get(audit_id)
            if ids is None:
                return found, list(dict.fromkeys(urls))
            self._ids.move_to_end(audit_id)
            for url in urls:
                if url in found or url in missing:
                    continue
                url_id = ids.get(url)
                if url_id is None:
                    missing[url] = None
                else:
                    ids.move_to_end(url)
                    found[url] = url_id
        return found, list(missing)

    def remember(self, audit_id: AuditId, learned: Mapping[str, int]) -> None:
        if not learned:
            return
        with self._lock:
            ids = self._ids.get(audit_id)
            if ids is None:
                ids = self._ids[audit_id] = OrderedDict()
                while len(self._ids) > self._audits:
                    self._ids.popitem(last=False)
            self._ids.move_to_end(audit_id)
            ids.update(learned)
            while len(ids) > self._per_audit:
                ids.popitem(last=False)

    def forget(self, audit_id: AuditId) -> None:
        with self._lock:
            self._ids.pop(audit_id, None)


class SqlCrawlStore:
    def __init__(
        self, engine: Engine, *, url_cache: UrlIdCache | None = None, issue_mark_every: int = ISSUE_MARK_EVERY
    ) -> None:
        self.engine = engine
        self.issue_mark_every = issue_mark_every
        self.template_mark_every = TEMPLATE_MARK_EVERY
        self.probed_walk = PROBED_WALK
        self._postgres = engine.dialect.name == "postgresql"
        self._url_ids = url_cache if url_cache is not None else UrlIdCache()
        self._first_issues = (
            FirstIssuePage(
                engine,
                sealed_total=_sealed_total,
                has_template=_has_template,
                issue_template=ISSUE_TEMPLATE,
                counted=_COUNTED,
                severities=SEVERITIES,
            )
            if self._postgres
            else None
        )

    # --- plumbing -----------------------------------------------------------------------------------

    def _reading(self) -> Connection:
        return self.engine.connect().execution_options(**{READ_ONLY: True})

    @contextmanager
    def _listing(self) -> Iterator[Connection]:
        """A reading connection for one page of a list, with PostgreSQL's JIT compilation off while it
        reads. A deep page's plan costs as much as the offset it skips, past `jit_above_cost`: compiling
        it took 15-50 ms of a query that runs in under 1 ms once its index walk is short. (The reads run
        outside a transaction, so `SET LOCAL` would not hold: the setting is put back afterwards; a
        connection that failed meanwhile may keep it off, which costs nothing.)"""
        with self._reading() as conn:
            if not self._postgres:
                yield conn
                return
            jit = conn.exec_driver_sql(
                "SELECT current_setting('jit'), set_config('jit', 'off', false)"
            ).scalar()
            yield conn
            conn.exec_driver_sql("SELECT set_config('jit', %(jit)s, false)", {"jit": jit})

    def _copy(
        self,
        conn: Connection,
        table: Table,
        columns: Sequence[str],
        rows: Iterable[Sequence[Any]],
        *,
        binary_types: Sequence[str] = (),
    ) -> None:
        """Bulk insert: COPY on PostgreSQL (inside the open transaction), executemany on SQLite.

        `binary_types` (PostgreSQL type names, one per column) switch to binary COPY, which the server
        takes without parsing text: for rows of plain numbers and flags.
        """
        if self._postgres:
            cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
            spec = " (FORMAT BINARY)" if binary_types else ""
            with cursor.copy(f"COPY {table.name} ({', '.join(columns)}) FROM STDIN{spec}") as copy:
                if binary_types:
                    copy.set_types(list(binary_types))
                for row in rows:
                    copy.write_row(row)
            return
        for chunk in _chunks(rows, _CHUNK):
            conn.execute(insert(table), [dict(zip(columns, row, strict=True)) for row in chunk])

    def _in(self, column: Any, values: Iterable[Any]) -> Iterator[ColumnElement[bool]]:
        """`column IN values`, split into as few conditions as the database allows (an array on PostgreSQL)."""
        if self._postgres:
            for chunk in _chunks(values, 10 * _CHUNK):
                yield column == func.any(bindparam(None, chunk, type_=ARRAY(column.type), unique=True))
        else:
            for chunk in _chunks(values, _LOOKUP_CHUNK_SQLITE):
                yield column.in_(chunk)

    def _intern(
        self,
        conn: Connection,
        audit_id: AuditId,
        urls: Iterable[str],
        learned: dict[str, int],
        *,
        fresh: set[int] | None = None,
    ) -> dict[str, int]:
        """The ids of `urls`, interning new ones; their ids are added to `fresh` when given.

        What the database answered is added to `learned`, for the cache once the transaction commits.
        """
        found, missing = self._url_ids.known(audit_id, urls)
        if not missing:
            return found
        wanted = {url: url_key(url) for url in missing if url not in learned}
        found.update((url, learned[url]) for url in missing if url in learned)
        if not wanted:
            return found
        if self._postgres:
            conn.execute(text("SELECT pg_advisory_xact_lock(:c, :a)"), {"c": _INTERN_LOCK, "a": audit_id})
        keys = {key: url for url, key in wanted.items()}
        stored: dict[str, int] = {}
        for key, url_id, url in self._known_urls(conn, audit_id, list(keys)):
            if keys[key] != url:
                raise RuntimeError(f"URL key collision in audit {audit_id}: {url!r} and {keys[key]!r}")
            stored[url] = url_id
        new_urls = [url for url in wanted if url not in stored]
        if new_urls:
            last = conn.execute(
                select(func.coalesce(func.max(crawl_urls.c.id), 0)).where(crawl_urls.c.audit_id == audit_id)
            ).scalar_one()
            new = {url: last + offset for offset, url in enumerate(new_urls, start=1)}
            self._copy(
                conn, crawl_urls, URL_COLUMNS, ((audit_id, i, wanted[url], url) for url, i in new.items())
            )
            stored.update(new)
            if fresh is not None:
                fresh.update(new.values())
        learned.update(stored)
        found.update(stored)
        return found

    @contextmanager
    def _interning(self, audit_id: AuditId) -> Iterator[tuple[Connection, dict[str, int]]]:
        """A write transaction, and the URL ids it learns: cached once (and only if) it commits."""
        learned: dict[str, int] = {}
        with self.engine.begin() as conn:
            yield conn, learned
        self._url_ids.remember(audit_id, learned)

    def _known_urls(self, conn: Connection, audit_id: AuditId, keys: list[int]) -> Iterator[Any]:
        if not self._postgres:
            for condition in self._in(crawl_urls.c.key, keys):
                yield from conn.execute(
                    select(crawl_urls.c.key, crawl_urls.c.id, crawl_urls.c.url).where(
                        crawl_urls.c.audit_id == audit_id, condition
                    )
                )
            return
        # One unique-index probe per key, whatever the statistics say: while a fresh audit's rows pour in,
        # they are stale, and a plain `key = ANY(...)` may be planned as a scan of all the audit's URLs.
        for chunk in _chunks(keys, 10 * _CHUNK):
            yield from conn.execute(_PROBE_URLS, {"audit": audit_id, "keys": chunk})

    def _delete_where_in(
        self, conn: Connection, table: Table, audit_id: AuditId, column: Any, ids: Sequence[int]
    ) -> None:
        for condition in self._in(column, sorted(set(ids))):
            conn.execute(delete(table).where(table.c.audit_id == audit_id, condition))

    def _json(self, value: Any) -> Any:
        # COPY takes the JSON text (orjson: several times quicker than json, the same compact text);
        # SQLAlchemy's executemany serialises dicts itself.
        return orjson.dumps(value).decode() if self._postgres else value

    # --- URLs ---------------------------------------------------------------------------------------

    def intern(self, audit_id: AuditId, urls: Iterable[str]) -> Mapping[str, int]:
        urls = list(urls)
        with self._interning(audit_id) as (conn, learned):
            ids = self._intern(conn, audit_id, urls, learned)
        return {url: ids[url] for url in urls}

    def urls(self, audit_id: AuditId, url_ids: Iterable[int]) -> Mapping[int, str]:
        ids = sorted(set(url_ids))
        found: dict[int, str] = {}
        with self._reading() as conn:
            for condition in self._in(crawl_urls.c.id, ids):
                rows = conn.execute(
                    select(crawl_urls.c.id, crawl_urls.c.url).where(
                        crawl_urls.c.audit_id == audit_id, condition
                    )
                )
                found.update((url_id, url) for url_id, url in rows)
        return found

    def stream_urls(self, audit_id: AuditId) -> Iterator[tuple[int, str]]:
        if self._postgres:  # a range of ids at a time in two arrays (see `stream_link_batches`)
            with self._bulk_reading() as raw:
                top = raw.execute(
                    "SELECT max(id) FROM crawl_urls WHERE audit_id = %s", (audit_id,)
                ).fetchone()[0]
                for low in range(0, (top or 0) + 1, _URL_IDS):
                    ids, urls = raw.execute(
                        _URL_RANGE, (audit_id, low, low + _URL_IDS), binary=True
                    ).fetchone()
                    if ids:
                        yield from zip(ids, urls, strict=True)
            return
        query = (
            select(crawl_urls.c.id, crawl_urls.c.url)
            .where(crawl_urls.c.audit_id == audit_id)
            .order_by(crawl_urls.c.id)
        )
        for row in self._stream(query):
            yield row.id, row.url

    def _stream(self, query: Any) -> Iterator[Any]:
        with self._reading() as conn:
            result = conn.execution_options(stream_results=True, yield_per=_STREAM_CHUNK).execute(query)
            yield from result

    # --- pages, links, issues -----------------------------------------------------------------------

    def write_pages(
        self, audit_id: AuditId, pages: Iterable[PageFacts], *, templates: Mapping[str, str] | None = None
    ) -> int:
        templates = templates or {}
        count = 0
        with self._interning(audit_id) as (conn, learned):
            for chunk in _chunks(pages, _CHUNK):
                fresh: set[int] = set()
                ids = self._intern(conn, audit_id, [p.url for p in chunk], learned, fresh=fresh)
                # Only URLs known before this batch can have a page to replace (a redelivered slice).
                known = [i for i in ids.values() if i not in fresh]
                if known:
                    self._delete_where_in(conn, crawl_pages, audit_id, crawl_pages.c.url_id, known)
                    self._delete_where_in(conn, crawl_extracts, audit_id, crawl_extracts.c.url_id, known)
                rows = {}
                extracted = {}
                for page in chunk:  # the last of a URL's duplicates in one batch wins, as in memory
                    values = page_values(page, template=templates.get(page.url, ""))
                    values["facts"] = self._json(values["facts"])
                    values["site"] = self._json(values["site"])
                    rows[ids[page.url]] = values
                    extracted[ids[page.url]] = page
                self._copy(
                    conn,
                    crawl_pages,
                    PAGE_COLUMNS,
                    (
                        (audit_id, url_id, *(values[c] for c in PAGE_COLUMNS[2:]))
                        for url_id, values in rows.items()
                    ),
                )
                if any(page.extracted for page in extracted.values()):
                    self._copy(
                        conn,
                        crawl_extracts,
                        EXTRACT_COLUMNS,
                        itertools.chain.from_iterable(
                            extract_rows(audit_id, url_id, page) for url_id, page in extracted.items()
                        ),
                    )
                count += len(chunk)
        return count

    def write_links(self, audit_id: AuditId, links: Iterable[tuple[str, Link]]) -> int:
        return self.replace_links(audit_id, (), links)

    def replace_links(
        self, audit_id: AuditId, source_ids: Iterable[int], links: Iterable[tuple[str, Link]]
    ) -> int:
        # All the call's URLs first, then one COPY: a COPY costs a round trip to start and one to finish,
        # and no other statement can run on the connection while it is open.
        rows: list[tuple[int, int, int, int, bool, bool]] = []
        with self._interning(audit_id) as (conn, learned):
            self._delete_where_in(conn, crawl_links, audit_id, crawl_links.c.source_id, list(source_ids))
            for chunk in _chunks(links, _CHUNK):
                ids = self._intern(
                    conn,
                    audit_id,
                    itertools.chain.from_iterable((source, link.target) for source, link in chunk),
                    learned,
                )
                rows.extend(
                    (
                        audit_id,
                        ids[source],
                        ids[link.target],
                        LINK_KIND_CODES[link.kind],
                        link.nofollow,
                        link.internal,
                    )
                    for source, link in chunk
                )
            self._copy(conn, crawl_links, LINK_COLUMNS, rows, binary_types=LINK_TYPES)
        return len(rows)

    def pages_by_url(
        self, audit_id: AuditId, urls: Iterable[str], *, links: bool = False
    ) -> Mapping[str, PageFacts]:
        keys = {url_key(url): url for url in urls}
        found: dict[str, PageFacts] = {}
        if not keys:
            return found
        with self._reading() as conn:
            ids = {
                url_id: url
                for key, url_id, url in self._known_urls(conn, audit_id, list(keys))
                if keys[key] == url
            }
            for condition in self._in(crawl_pages.c.url_id, sorted(ids)):
                for row in conn.execute(
                    select(crawl_pages).where(crawl_pages.c.audit_id == audit_id, condition)
                ):
                    found[ids[row.url_id]] = page_from_row(row, ids[row.url_id])
            if not links:
                return found
            outgoing: dict[int, list[Link]] = {
                url_id: [] for url_id, url in ids.items() if url in found and found[url].html is not None
            }
            query = select(
                crawl_links.c.source_id,
                crawl_urls.c.url,
                crawl_links.c.kind,
                crawl_links.c.nofollow,
                crawl_links.c.internal,
            ).join(
                crawl_urls,
                (crawl_urls.c.audit_id == crawl_links.c.audit_id)
                & (crawl_urls.c.id == crawl_links.c.target_id),
            )
            for condition in self._in(crawl_links.c.source_id, sorted(outgoing)):
                for source, target, kind, nofollow, internal in conn.execute(
                    query.where(crawl_links.c.audit_id == audit_id, condition)
                ):
                    outgoing[source].append(
                        Link(target, LINK_KIND_OF[kind], internal=internal, nofollow=nofollow)
                    )
        for url_id, targets in outgoing.items():
            page = found[ids[url_id]]
            assert page.html is not None
            found[page.url] = evolve(page, html=evolve(page.html, links=tuple(targets)))
        return found

    def _append_issues(
        self, conn: Connection, audit_id: AuditId, issues: Iterable[Issue], learned: dict[str, int]
    ) -> int:
        rows: list[tuple[Any, ...]] = []
        for chunk in _chunks(issues, _CHUNK):  # URLs first, then one COPY (see write_links)
            ids = self._intern(conn, audit_id, [i.url for i in chunk], learned)
            rows.extend(
                (audit_id, ids[i.url], i.check_code, i.severity.rank, i.template, self._json(dict(i.details)))
                for i in chunk
            )
        self._copy(conn, crawl_issues, ISSUE_COLUMNS, rows)
        return len(rows)

    def write_issues(self, audit_id: AuditId, issues: Iterable[Issue]) -> int:
        with self._interning(audit_id) as (conn, learned):
            return self._append_issues(conn, audit_id, issues, learned)

    def replace_issues(self, audit_id: AuditId, url_ids: Iterable[int], issues: Iterable[Issue]) -> int:
        with self._interning(audit_id) as (conn, learned):
            self._delete_where_in(conn, crawl_issues, audit_id, crawl_issues.c.url_id, list(url_ids))
            return self._append_issues(conn, audit_id, issues, learned)

    def assign_templates(self, audit_id: AuditId, templates: Iterable[tuple[int, str]]) -> None:
        with self.engine.begin() as conn:
            self._assign_templates(conn, audit_id, dict(templates))

    def _assign_templates(self, conn: Connection, audit_id: AuditId, chosen: dict[int, str]) -> None:
        # One narrow row per URL, copied in, instead of rewriting the URL's wide page and issue rows.
        self._delete_where_in(conn, crawl_templates, audit_id, crawl_templates.c.url_id, list(chosen))
        self._copy(
            conn,
            crawl_templates,
            TEMPLATE_COLUMNS,
            ((audit_id, url_id, template) for url_id, template in chosen.items()),
        )

    def seal_counts(
        self, audit_id: AuditId, *, issues: Sequence[Issue] = (), templates: Iterable[tuple[int, str]] = ()
    ) -> None:
        # One write transaction for finalisation's last rows and the counts (SQLite has one writer).
        chosen = dict(templates)
        with self._interning(audit_id) as (conn, learned):
            if issues:
                self._append_issues(conn, audit_id, issues, learned)
            if chosen:
                self._assign_templates(conn, audit_id, chosen)
            self._seal_counts(conn, audit_id)

    def _seal_counts(self, conn: Connection, audit_id: AuditId) -> None:
        issues, templates = crawl_issues, crawl_templates
        template = func.coalesce(templates.c.template, issues.c.template)
        with_template = issues.outerjoin(
            templates, (templates.c.audit_id == issues.c.audit_id) & (templates.c.url_id == issues.c.url_id)
        )
        by_issue = (
            select(literal(audit_id), issues.c.check_code, issues.c.severity, template, func.count())
            .select_from(with_template)
            .where(issues.c.audit_id == audit_id)
            .group_by(issues.c.check_code, issues.c.severity, template)
        )
        by_status = (
            select(literal(audit_id), crawl_pages.c.status_code, func.count())
            .where(crawl_pages.c.audit_id == audit_id)
            .group_by(crawl_pages.c.status_code)
        )
        issue_columns = ["audit_id", "check_code", "severity", "template", "count"]
        for table in (
            crawl_issue_counts,
            crawl_page_counts,
            crawl_issue_marks,
            crawl_issue_template_marks,
        ):
            conn.execute(delete(table).where(table.c.audit_id == audit_id))
        conn.execute(insert(crawl_issue_counts).from_select(issue_columns, by_issue))
        group: dict[str, Any] = {"severity": issues.c.severity, "check_code": issues.c.check_code}
        conn.execute(_marks(audit_id, crawl_issue_marks, group, issues, self.issue_mark_every))
        group = {"template": template, **group}
        every = self.template_mark_every
        conn.execute(
            _marks(audit_id, crawl_issue_template_marks, group, with_template, every, template.isnot(None))
        )
        conn.execute(
            insert(crawl_issue_counts).values(
                audit_id=audit_id, check_code=_COUNTED, severity=0, template="", count=0
            )
        )
        conn.execute(insert(crawl_page_counts).from_select(["audit_id", "status_code", "count"], by_status))
        conn.execute(insert(crawl_page_counts).values(audit_id=audit_id, status_code=_PAGES_COUNTED, count=0))

    def refresh_statistics(self, audit_id: AuditId) -> None:
        """On PostgreSQL, VACUUM (ANALYZE) the tables the lists read. ANALYZE: after a bulk load the planner
        thought an audit of 352,685 issues had 630 and sorted them all for every page. VACUUM: it marks
        the freshly written heap pages all-visible, so a deep page skips its offset on an index-only scan
        (without, every skipped index entry also visits the heap: 3-5 times slower). Both only touch what
        changed since they last ran (VACUUM skips all-visible pages; ANALYZE samples), and neither blocks
        writers; they run outside a transaction, as they must. INDEX_CLEANUP OFF: the tables hold every
        audit's rows, and removing the few dead ones (a redelivered slice) from their indexes would read
        every index whole; autovacuum does that in its own time. SKIP_LOCKED: a table another VACUUM or
        ANALYZE is processing (another finalisation, autovacuum) is being done already; do not wait for
        it. The links table is left to autovacuum: no list reads it. SQLite: nothing (its planner keeps
        no statistics unless asked, and needs none here)."""
        if not self._postgres:
            return
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(
                text(f"VACUUM (ANALYZE, INDEX_CLEANUP OFF, SKIP_LOCKED) {', '.join(_LISTED_TABLES)}")
            )

    def _sealed_total(
        self, conn: Connection, table: Table, marker: Any, audit_id: AuditId, *filters: Any
    ) -> int | None:
        """The total of the rows matching `filters` from the sealed counts, or None when never sealed."""
        total = conn.execute(select(_sealed_total(table, marker, audit_id, *filters))).scalar()
        return None if total is None else int(total)

    def page_count(self, audit_id: AuditId) -> int:
        with self._reading() as conn:
            query = select(func.count()).select_from(crawl_pages).where(crawl_pages.c.audit_id == audit_id)
            return int(conn.execute(query).scalar_one())

    def list_pages(self, audit_id: AuditId, query: PageQuery) -> tuple[Sequence[PageRow], int]:
        status_code, extract, offset, limit = query.status_code, query.extract, query.offset, query.limit
        conditions = [crawl_pages.c.audit_id == audit_id]
        if status_code is not None:
            conditions.append(crawl_pages.c.status_code == status_code)
        if extract is not None:
            conditions.append(_extract_condition(extract))
        columns = [c for c in crawl_pages.columns if c.name not in ("facts", "site", "sketch", "template")]
        sealed = [] if status_code is None else [crawl_page_counts.c.status_code == status_code]
        with self._listing() as conn:
            total = (
                None  # the sealed counts are by status only
                if extract is not None
                else self._sealed_total(
                    conn,
                    crawl_page_counts,
                    crawl_page_counts.c.status_code == _PAGES_COUNTED,
                    audit_id,
                    *sealed,
                )
            )
            if total is None:
                total = conn.execute(
                    select(func.count()).select_from(crawl_pages).where(*conditions)
                ).scalar_one()
            # The page's URL ids first, from the index alone (the primary key, or (audit, status, URL id)),
            # then the rows of those 50: skipping `offset` rows costs index entries, not joins and
            # template probes (a last page of 100,000 took 1.3 s; see `list_issues`).
            page_ids = (
                select(crawl_pages.c.url_id.label("url_id"))
                .where(*conditions)
                .order_by(crawl_pages.c.url_id)
                .offset(offset)
                .limit(limit)
                .subquery()
            )
            rows = conn.execute(
                select(*columns, PAGE_TEMPLATE, PAGE_DISALLOWED, crawl_urls.c.url)
                .join(page_ids, page_ids.c.url_id == crawl_pages.c.url_id)
                .join(
                    crawl_urls,
                    (crawl_urls.c.audit_id == crawl_pages.c.audit_id)
                    & (crawl_urls.c.id == crawl_pages.c.url_id),
                )
                .where(crawl_pages.c.audit_id == audit_id)
                .order_by(crawl_pages.c.url_id)
            )
            listed = [summary_from_row(r) for r in rows]
            values = self._extracted(conn, audit_id, [row.url_id for row in listed])
            if values:
                listed = [evolve(row, extracted=values.get(row.url_id, ())) for row in listed]
            return listed, int(total)

    def _extracted(
        self, conn: Connection, audit_id: AuditId, url_ids: Sequence[int]
    ) -> dict[int, tuple[Extracted, ...]]:
        """What the extraction rules read on these pages (none of an audit without rules)."""
        rows: list[Any] = []
        for condition in self._in(crawl_extracts.c.url_id, url_ids):
            rows.extend(
                conn.execute(select(crawl_extracts).where(crawl_extracts.c.audit_id == audit_id, condition))
            )
        rows.sort(key=lambda row: (row.url_id, row.rule, row.position))
        return {
            url_id: extracted_of(group)
            for url_id, group in itertools.groupby(rows, key=lambda row: row.url_id)
        }

    def list_issues(self, audit_id: AuditId, query: IssueQuery) -> tuple[Sequence[Issue], int]:
        check_code, severity, template = query.check_code, query.severity, query.template
        offset, limit = query.offset, query.limit
        if offset == 0 and self._first_issues is not None:  # one round trip (firstpage.py)
            return self._first_issues.read(
                audit_id, check_code=check_code, severity=severity, template=template, limit=limit
            )
        conditions = [crawl_issues.c.audit_id == audit_id]
        counted = crawl_issue_counts.c
        sealed = []
        same_severity: Any = None
        if check_code is not None:
            conditions.append(crawl_issues.c.check_code == check_code)
            sealed.append(counted.check_code == check_code)
        if severity is not None:
            same_severity = crawl_issues.c.severity == severity.rank
            conditions.append(same_severity)
            sealed.append(counted.severity == severity.rank)
        has_template: Any = None
        if template is not None:
            has_template = _has_template(audit_id, template)
            conditions.append(has_template)
            sealed.append(counted.template == template)
        with self._listing() as conn:
            total = self._sealed_total(
                conn, crawl_issue_counts, counted.check_code == _COUNTED, audit_id, *sealed
            )
            if total is None:
                total = conn.execute(
                    select(func.count()).select_from(crawl_issues).where(*conditions)
                ).scalar_one()
            elif offset:
                skipped = self._skip_sealed_groups(conn, audit_id, sealed, offset)
                if skipped is None:
                    return [], int(total)
                (first_severity, first_check), offset = skipped
                start, offset = self._issues_from(
                    conn, audit_id, first_severity, first_check, offset, check_code, template
                )
                conditions.append(start)
                if template is not None and self._walk_is_short(
                    conn, audit_id, first_severity, first_check, template, offset + limit
                ):
                    conditions = [c for c in conditions if c is not has_template]
                    conditions.append(_template_of(crawl_issues) == template)
                if severity is not None:
                    # `severity <=` rather than `=` beside the start (which implies `>=`): with `=` on its
                    # first column PostgreSQL starts the index walk at the severity, not at the start.
                    conditions = [c for c in conditions if c is not same_severity]
                    conditions.append(crawl_issues.c.severity <= severity.rank)
            order = (
                crawl_issues.c.severity,
                crawl_issues.c.check_code,
                crawl_issues.c.url_id,
                crawl_issues.c.id,
            )
            # The page's issue ids first, walking the index (audit, severity, check, URL id, id) alone,
            # then the rows of those 50 with their URLs and templates. Skipping `offset` rows of the
            # whole query joined and probed every skipped row (a deep page of 350,000 issues: 1.2-1.6 s).
            page_ids = (
                select(crawl_issues.c.id.label("id"))
                .where(*conditions)
                .order_by(*order)
                .offset(offset)
                .limit(limit)
                .subquery()
            )
            rows = conn.execute(
                self._issues_with_urls().join(page_ids, page_ids.c.id == crawl_issues.c.id).order_by(*order)
            )
            return [issue_from_row(r) for r in rows], int(total)

    def _issues_from(
        self,
        conn: Connection,
        audit_id: AuditId,
        severity: int,
        check_code: str,
        offset: int,
        check_filter: str | None,
        template: str | None,
    ) -> tuple[Any, int]:
        """The condition that starts the list at the last mark at or before row `offset` of the group
        (`severity`, `check_code`), or at the group's first row, and the offset from there. With a
        template filter, `offset` counts the group's issues of that template, and so do its marks."""
        i = crawl_issues.c
        marks: Any = crawl_issue_marks.c if template is None else crawl_issue_template_marks.c
        every = self.issue_mark_every if template is None else self.template_mark_every
        mark = None
        if offset >= every:
            same_template = [] if template is None else [marks.template == template]
            mark = conn.execute(
                select(marks.ordinal, marks.url_id, marks.issue_id)
                .where(
                    marks.audit_id == audit_id,
                    *same_template,
                    marks.severity == severity,
                    marks.check_code == check_code,
                    marks.ordinal <= offset,
                )
                .order_by(marks.ordinal.desc())
                .limit(1)
            ).first()
        if mark is None:
            return tuple_(i.severity, i.check_code) >= tuple_(severity, check_code), offset
        rest = offset - int(mark.ordinal)
        if check_filter is not None:  # the check is fixed: in the order of the index (audit, check, ...)
            return tuple_(i.severity, i.url_id, i.id) >= tuple_(severity, mark.url_id, mark.issue_id), rest
        start = tuple_(i.severity, i.check_code, i.url_id, i.id) >= tuple_(
            severity, check_code, mark.url_id, mark.issue_id
        )
        return start, rest

    def _walk_is_short(
        self, conn: Connection, audit_id: AuditId, severity: int, check_code: str, template: str, rows: int
    ) -> bool:
        """Whether finding `rows` issues of `template` in the group (`severity`, `check_code`) should walk
        at most `probed_walk` (`PROBED_WALK`) of the group's issues, by the share of the template in the sealed counts."""
        counted = crawl_issue_counts.c
        group, of_template = conn.execute(
            select(
                func.sum(counted.count), func.sum(counted.count).filter(counted.template == template)
            ).where(
                counted.audit_id == audit_id, counted.severity == severity, counted.check_code == check_code
            )
        ).one()
        return bool(of_template) and rows * int(group) <= self.probed_walk * int(of_template)

    def _skip_sealed_groups(
        self, conn: Connection, audit_id: AuditId, sealed: Sequence[Any], offset: int
    ) -> tuple[tuple[int, str], int] | None:
        """Where the list's row `offset` is, from the sealed counts: the (severity, check) group it falls
        in, and its offset from that group's first row (of those matching the filters); None past the end.
        The list is ordered by severity and check first, so a deep page starts its index walk at its
        group rather than at the audit's first issue (the counts are exact: nothing writes an audit's
        issues once they are sealed). The groups come back in the database's own order of the columns."""
        counted = crawl_issue_counts.c
        groups = conn.execute(
            select(counted.severity, counted.check_code, func.sum(counted.count))
            .where(counted.audit_id == audit_id, counted.check_code != _COUNTED, *sealed)
            .group_by(counted.severity, counted.check_code)
            .order_by(counted.severity, counted.check_code)
        )
        before = 0
        for severity, check_code, count in groups:
            if offset < before + int(count):
                return (int(severity), str(check_code)), offset - before
            before += int(count)
        return None

    def _issues_with_urls(self) -> Any:
        columns = [c for c in crawl_issues.columns if c.name != "template"]
        return select(*columns, ISSUE_TEMPLATE, crawl_urls.c.url).join(
            crawl_urls,
            (crawl_urls.c.audit_id == crawl_issues.c.audit_id) & (crawl_urls.c.id == crawl_issues.c.url_id),
        )

    def stream_pages(self, audit_id: AuditId) -> Iterator[StoredPage]:
        columns = [c for c in crawl_pages.columns if c.name != "template"]
        query = (
            select(*columns, PAGE_TEMPLATE, crawl_urls.c.url)
            .join(
                crawl_urls,
                (crawl_urls.c.audit_id == crawl_pages.c.audit_id) & (crawl_urls.c.id == crawl_pages.c.url_id),
            )
            .where(crawl_pages.c.audit_id == audit_id)
            .order_by(crawl_pages.c.url_id)
        )
        for row in self._stream(query):
            yield StoredPage(row.url_id, row.template, page_from_row(row, row.url))

    def stream_links(self, audit_id: AuditId) -> Iterator[LinkRow]:
        query = (
            select(crawl_links).where(crawl_links.c.audit_id == audit_id).order_by(crawl_links.c.source_id)
        )
        for row in self._stream(query):
            yield link_from_row(row)

    def stream_page_rows(self, audit_id: AuditId) -> Iterator[PageRow]:
        columns = [c for c in crawl_pages.columns if c.name not in ("facts", "site", "sketch", "template")]
        query = (
            select(*columns, PAGE_TEMPLATE, PAGE_DISALLOWED, crawl_urls.c.url)
            .join(
                crawl_urls,
                (crawl_urls.c.audit_id == crawl_pages.c.audit_id) & (crawl_urls.c.id == crawl_pages.c.url_id),
            )
            .where(crawl_pages.c.audit_id == audit_id)
            .order_by(crawl_pages.c.url_id)
        )
        # The extraction rules' values, streamed beside the pages in the same URL-id order and merged.
        values = itertools.groupby(
            self._stream(
                select(crawl_extracts)
                .where(crawl_extracts.c.audit_id == audit_id)
                .order_by(crawl_extracts.c.url_id, crawl_extracts.c.rule, crawl_extracts.c.position)
            ),
            key=lambda row: row.url_id,
        )
        pending = next(values, None)
        for row in self._stream(query):
            page = summary_from_row(row)
            while pending is not None and pending[0] < page.url_id:
                pending = next(values, None)
            if pending is not None and pending[0] == page.url_id:
                page = evolve(page, extracted=extracted_of(pending[1]))
                pending = next(values, None)
            yield page

    def stream_link_lines(self, audit_id: AuditId) -> Iterator[LinkLine]:
        source = crawl_urls.alias("source")
        target = crawl_urls.alias("target")
        query = (
            select(source.c.url.label("source"), target.c.url.label("target"), crawl_links)
            .join(
                source,
                (source.c.audit_id == crawl_links.c.audit_id) & (source.c.id == crawl_links.c.source_id),
            )
            .join(
                target,
                (target.c.audit_id == crawl_links.c.audit_id) & (target.c.id == crawl_links.c.target_id),
            )
            .where(crawl_links.c.audit_id == audit_id)
            .order_by(crawl_links.c.source_id)
        )
        kinds = LINK_KIND_OF
        for row in self._stream(query):
            yield LinkLine(row.source, row.target, kinds[row.kind], row.nofollow, row.internal)

    def stream_site_pages(self, audit_id: AuditId) -> Iterator[StoredPage]:
        if not self._postgres:
            yield from self.stream_pages(audit_id)
            return
        loads = orjson.loads
        assigned = self._assigned_templates(audit_id)
        with self._bulk_reading() as raw:  # a range of ids at a time in arrays (see `stream_link_batches`)
            top = raw.execute(
                "SELECT max(url_id) FROM crawl_pages WHERE audit_id = %s", (audit_id,)
            ).fetchone()[0]
            for low in range(0, (top or 0) + 1, _SITE_PAGE_IDS):
                columns = raw.execute(
                    _SITE_PAGES, (audit_id, low, low + _SITE_PAGE_IDS), binary=True
                ).fetchone()
                if not columns[0]:
                    continue
                for row in zip(*columns, strict=True):
                    (url_id, url, template, depth, status, error, content_type, blocked_by, in_sitemap) = row[
                        :9
                    ]
                    site, sketch, facts, word_count = row[9:]
                    template = assigned.get(url_id, template)
                    if site is None:  # written before the narrow columns: everything is in `facts`
                        old = SimpleNamespace(
                            facts=loads(facts),
                            site=None,
                            sketch=None,
                            depth=depth,
                            status_code=status,
                            fetch_error=error,
                            content_type=content_type,
                            blocked_by=blocked_by,
                            in_sitemap=in_sitemap,
                            word_count=word_count,
                        )
                        yield StoredPage(url_id, template, page_from_row(old, url))
                        continue
                    page = site_page(
                        url, depth, status, error, content_type, blocked_by, in_sitemap, loads(site), sketch
                    )
                    yield StoredPage(url_id, template, page)

    def _assigned_templates(self, audit_id: AuditId) -> dict[int, str]:
        """The audit's assigned templates by URL id, read apart (see `_template_of`) for a bulk stream. A
        site has few templates: each is one string, not one per URL (500,000 copies at 500,000 pages)."""
        with self._bulk_reading() as raw:
            ids, templates = raw.execute(
                "SELECT array_agg(url_id), array_agg(template) FROM crawl_templates WHERE audit_id = %s",
                (audit_id,),
                binary=True,
            ).fetchone()
        return dict(zip(ids, map(sys.intern, templates), strict=True)) if ids else {}

    def stream_link_batches(self, audit_id: AuditId) -> Iterator[LinkBatch]:
        if not self._postgres:
            rows = iter(self.stream_links(audit_id))
            while chunk := list(itertools.islice(rows, _LINK_BATCH)):
                yield LinkBatch(
                    sources=[r.source for r in chunk],
                    targets=[r.target for r in chunk],
                    flags=[link_flags(r.kind, internal=r.internal, nofollow=r.nofollow) for r in chunk],
                )
            return
        # A row per link costs the client a protocol message and a Python tuple: the server packs a range
        # of sources' links into three arrays instead (one round trip, loaded in C), in index order as
        # `stream_links` reads them.
        with self._bulk_reading() as raw:
            top = raw.execute(
                "SELECT max(source_id) FROM crawl_links WHERE audit_id = %s", (audit_id,)
            ).fetchone()[0]
            for low in range(0, (top or 0) + 1, _LINK_SOURCES):
                sources, targets, flags = raw.execute(
                    _LINK_RANGE, (audit_id, low, low + _LINK_SOURCES), binary=True
                ).fetchone()
                if sources:
                    yield LinkBatch(sources=sources, targets=targets, flags=flags)

    @contextmanager
    def _bulk_reading(self) -> Iterator[Any]:
        """A psycopg connection in a read transaction without JIT: a bulk read's plan is simple, and
        compiling it would cost more than it saves. `begin` first lets the engine's LAZY_BEGIN set the
        driver's mode, so the connection goes back to the pool in the state the engine tracks."""
        with self._reading() as conn, conn.begin():
            raw = conn.connection.driver_connection
            with raw.transaction():  # type: ignore[union-attr]
                raw.execute("SET LOCAL jit = off")  # type: ignore[union-attr]
                yield raw

    def stream_issue_lines(self, audit_id: AuditId, *, quote: Sequence[str] = ()) -> Iterator[IssueLine]:
        severities = SEVERITIES
        if not self._postgres:
            for url_id, issue in self.stream_issues(audit_id):
                yield IssueLine.of(url_id, issue, quote)
            return
        statement = _ISSUE_RANGE.format(details="i.details::text" if quote else "NULL::text")
        # Most issues quote nothing: their details are parsed only when a wanted key's name is in the text.
        needles = tuple(orjson.dumps(key).decode() for key in quote)
        loads = orjson.loads
        assigned = self._assigned_templates(audit_id)
        last = 0
        with self._bulk_reading() as raw:  # writing order, a run at a time in arrays
            while True:
                ids, *columns = raw.execute(statement, (audit_id, last, _ISSUE_LINES), binary=True).fetchone()
                if not ids:
                    break
                last = ids[-1]
                for url_id, url, check_code, severity, template, text in zip(*columns, strict=True):
                    found = None
                    if text is not None and any(n in text for n in needles):
                        found = first_quote(loads(text), quote)
                    yield IssueLine(
                        url_id, url, check_code, severities[severity], assigned.get(url_id, template), found
                    )
                if len(ids) < _ISSUE_LINES:
                    break

    def stream_issues(self, audit_id: AuditId) -> Iterator[tuple[int, Issue]]:
        query = (
            self._issues_with_urls().where(crawl_issues.c.audit_id == audit_id).order_by(crawl_issues.c.id)
        )
        for row in self._stream(query):
            yield row.url_id, issue_from_row(row)

    # --- report and checkpoint ----------------------------------------------------------------------

    def _put_document(
        self, table: Table, column: str, audit_id: AuditId, document: Mapping[str, Any]
    ) -> None:
        with self.engine.begin() as conn:
            statement = dialect_insert(conn, table).values({"audit_id": audit_id, column: dict(document)})
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=[table.c.audit_id], set_={column: statement.excluded[column]}
                )
            )

    def _document(self, table: Table, column: str, audit_id: AuditId) -> Mapping[str, Any] | None:
        with self._reading() as conn:
            value = conn.execute(
                select(table.c[column]).where(table.c.audit_id == audit_id)
            ).scalar_one_or_none()
            return None if value is None else dict(value)

    def save_report(self, audit_id: AuditId, report: Report) -> None:
        self._put_document(crawl_reports, "report", audit_id, report_json(report))

    def report(self, audit_id: AuditId) -> Report | None:
        document = self._document(crawl_reports, "report", audit_id)
        return None if document is None else report_from_json(document)

    def save_archived_identities(self, audit_id: AuditId, identities: ArchivedIdentities) -> None:
        with self.engine.begin() as conn:
            updated = conn.execute(
                update(crawl_reports)
                .where(crawl_reports.c.audit_id == audit_id)
                .values(archived_identities=identities.as_json())
            ).rowcount
        if updated != 1:
            raise KeyError(f"audit {audit_id} has no report to keep identities beside")

    def archived_identities(self, audit_id: AuditId) -> ArchivedIdentities | None:
        with self._reading() as conn:
            document = conn.execute(
                select(crawl_reports.c.archived_identities).where(crawl_reports.c.audit_id == audit_id)
            ).scalar_one_or_none()
        return ArchivedIdentities.from_json(document)

    def save_checkpoint(self, audit_id: AuditId, state: Mapping[str, Any]) -> None:
        self._put_document(crawl_checkpoints, "state", audit_id, state)

    def checkpoint(self, audit_id: AuditId) -> Mapping[str, Any] | None:
        return self._document(crawl_checkpoints, "state", audit_id)

    # --- frontier -----------------------------------------------------------------------------------

    def frontier_add(self, audit_id: AuditId, entries: Iterable[tuple[str, int]]) -> int:
        added = 0
        with self._interning(audit_id) as (conn, learned):
            for chunk in _chunks(entries, _CHUNK):
                depths: dict[str, int] = {}
                for url, depth in chunk:
                    depths.setdefault(url, depth)
                ids = self._intern(conn, audit_id, depths, learned)
                seen: set[int] = set()
                for condition in self._in(crawl_frontier.c.url_id, ids.values()):
                    seen.update(
                        conn.execute(
                            select(crawl_frontier.c.url_id).where(
                                crawl_frontier.c.audit_id == audit_id, condition
                            )
                        ).scalars()
                    )
                new = [
                    {
                        "audit_id": audit_id,
                        "url_id": ids[url],
                        "depth": depth,
                        "state": FrontierState.QUEUED.value,
                    }
                    for url, depth in depths.items()
                    if ids[url] not in seen
                ]
                if new:
                    # RETURNING counts the rows really inserted: a concurrent writer of the same URL (it
                    # committed between the probe and the insert) leaves its row, and its count, alone.
                    inserted = conn.execute(
                        insert_ignoring_conflicts(conn, crawl_frontier).returning(crawl_frontier.c.url_id),
                        new,
                    )
                    added += len(inserted.all())
            self._move_counts(conn, audit_id, {FrontierState.QUEUED: added})
        return added

    def frontier_next(self, audit_id: AuditId, limit: int) -> Sequence[FrontierEntry]:
        with self._reading() as conn:
            rows = conn.execute(
                select(
                    crawl_frontier.c.url_id, crawl_frontier.c.depth, crawl_frontier.c.state, crawl_urls.c.url
                )
                .join(
                    crawl_urls,
                    (crawl_urls.c.audit_id == crawl_frontier.c.audit_id)
                    & (crawl_urls.c.id == crawl_frontier.c.url_id),
                )
                .where(
                    crawl_frontier.c.audit_id == audit_id,
                    crawl_frontier.c.state == FrontierState.QUEUED.value,
                )
                .order_by(crawl_frontier.c.depth, crawl_frontier.c.url_id)
                .limit(limit)
            )
            return [FrontierEntry(r.url_id, r.url, r.depth, FrontierState(r.state)) for r in rows]

    def frontier_mark(self, audit_id: AuditId, url_ids: Iterable[int], state: FrontierState) -> int:
        ids = sorted(set(url_ids))
        if not ids:
            return 0
        moved: dict[FrontierState, int] = {}
        with self.engine.begin() as conn:
            # The entries' states, locked (FOR UPDATE on PostgreSQL; SQLite's transaction is already the
            # one writer): a concurrent mover of the same entries waits, then reads the state this one
            # leaves, so no entry is counted out of a state twice. Both statements go by the primary key.
            leaving: list[int] = []
            for rows in self._frontier_states(conn, audit_id, ids):
                for url_id, source in rows:
                    if source != state.value:
                        leaving.append(url_id)
                        moved[FrontierState(source)] = moved.get(FrontierState(source), 0) - 1
            for condition in self._in(crawl_frontier.c.url_id, leaving):
                conn.execute(
                    update(crawl_frontier)
                    .where(crawl_frontier.c.audit_id == audit_id, condition)
                    .values(state=state.value)
                )
            if leaving:
                moved[state] = len(leaving)
            self._move_counts(conn, audit_id, moved)
        return moved.get(state, 0)

    def _frontier_states(self, conn: Connection, audit_id: AuditId, ids: list[int]) -> Iterator[Any]:
        """(url id, state) of the frontier entries of `ids`, locked for the transaction, chunk by chunk."""
        if self._postgres:
            for condition in self._in(crawl_frontier.c.url_id, ids):
                yield conn.execute(
                    select(crawl_frontier.c.url_id, crawl_frontier.c.state)
                    .where(crawl_frontier.c.audit_id == audit_id, condition)
                    .with_for_update()
                )
            return
        # SQLite's planner prefers the (audit_id, state, depth, url_id) index here, which covers the two
        # columns but finds the ids by scanning every entry of the audit: the primary key is named.
        for chunk in _chunks(ids, _LOOKUP_CHUNK_SQLITE):
            yield conn.execute(_SQLITE_FRONTIER_STATES, {"audit_id": audit_id, "ids": chunk})

    def _move_counts(self, conn: Connection, audit_id: AuditId, deltas: Mapping[FrontierState, int]) -> None:
        """Add `deltas` to the audit's frontier counters, inside the transaction that moved the rows
        (states in order, so two movers of one audit take the counter rows' locks in the same order)."""
        rows = [
            {"audit_id": audit_id, "state": s.value, "count": deltas[s]} for s in sorted(deltas) if deltas[s]
        ]
        if not rows:
            return
        statement = dialect_insert(conn, crawl_frontier_counts)
        conn.execute(
            statement.on_conflict_do_update(
                index_elements=[crawl_frontier_counts.c.audit_id, crawl_frontier_counts.c.state],
                set_={"count": crawl_frontier_counts.c.count + statement.excluded["count"]},
            ),
            rows,
        )

    def frontier_counts(self, audit_id: AuditId) -> Mapping[FrontierState, int]:
        with self._reading() as conn:
            rows = conn.execute(
                select(crawl_frontier_counts.c.state, crawl_frontier_counts.c.count).where(
                    crawl_frontier_counts.c.audit_id == audit_id, crawl_frontier_counts.c.count != 0
                )
            )
            return {FrontierState(state): int(count) for state, count in rows}

    def frontier_recount(self, audit_id: AuditId) -> Mapping[FrontierState, int]:
        with self._reading() as conn:
            rows = conn.execute(
                select(crawl_frontier.c.state, func.count())
                .where(crawl_frontier.c.audit_id == audit_id)
                .group_by(crawl_frontier.c.state)
            )
            return {FrontierState(state): int(count) for state, count in rows}

    # --- archive ------------------------------------------------------------------------------------

    def archive(self, audit_id: AuditId) -> None:
        self._url_ids.forget(audit_id)
        with self.engine.begin() as conn:
            for table in (
                crawl_pages,
                crawl_extracts,
                crawl_links,
                crawl_issues,
                crawl_issue_counts,
                crawl_issue_marks,
                crawl_issue_template_marks,
                crawl_page_counts,
                crawl_templates,
                crawl_frontier,
                crawl_frontier_counts,
                crawl_checkpoints,
                crawl_urls,
            ):
                conn.execute(delete(table).where(table.c.audit_id == audit_id))
        self._url_ids.forget(audit_id)  # again: a batch that committed meanwhile may have cached some


def sql_crawl_store(database_url: str | Engine, *, migrate: bool | None = None) -> SqlCrawlStore:
    """The crawl store over the process's shared engine for `database_url` (the unit of work's engine).

    `migrate` None: bring a SQLite file to the latest schema first (the embedded default)."""
    engine = engine_for(database_url) if isinstance(database_url, str) else database_url
    if migrate if migrate is not None else is_sqlite(engine):
        from siteaudit.adapters.sql.migration import migrate as run_migrations

        run_migrations(engine)
    return SqlCrawlStore(engine)
