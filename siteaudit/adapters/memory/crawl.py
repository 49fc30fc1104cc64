"""The in-memory crawl store: an audit's URLs, pages, links, issues, report and frontier in dictionaries."""

import array
import copy
import itertools
import json
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from attrs import define, evolve, field

from siteaudit.domain.checks.site import LinkBatch, link_flags
from siteaudit.domain.diff import ArchivedIdentities
from siteaudit.domain.facts import HtmlFacts, Link, PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.domain.issue import Issue
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
    excluded_by,
)

_BATCH = 10_000  # links per `LinkBatch`


@define
class _AuditData:
    ids: dict[str, int] = field(factory=dict)
    urls: dict[int, str] = field(factory=dict)
    pages: dict[int, StoredPage] = field(factory=dict)
    links: list[LinkRow] = field(factory=list)
    issues: dict[int, tuple[int, Issue]] = field(factory=dict)  # writing sequence -> (url id, issue)
    frontier: dict[int, FrontierEntry] = field(factory=dict)
    counts: Counter[FrontierState] = field(factory=Counter)  # frontier entries by state, kept by each move
    checkpoint: dict[str, Any] | None = None


def _json_copy(value: Mapping[str, Any]) -> dict[str, Any]:
    # A round trip through JSON: what the SQL store would give back, and a caller's later edits do not leak.
    return dict(json.loads(json.dumps(value)))


def _without_links(page: PageFacts) -> PageFacts:
    html: HtmlFacts | None = page.html
    return page if html is None or not html.links else evolve(page, html=evolve(html, links=()))


class MemoryCrawlStore:
    """Thread-safe; every method is atomic, like one transaction of the SQL store."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._audits: dict[AuditId, _AuditData] = {}
        self._reports: dict[AuditId, Report] = {}  # frozen values, kept as they are
        self._identities: dict[AuditId, ArchivedIdentities] = {}
        self._sequence = itertools.count(1)

    def _data(self, audit_id: AuditId) -> _AuditData:
        return self._audits.setdefault(audit_id, _AuditData())

    def _intern(self, data: _AuditData, url: str) -> int:
        url_id = data.ids.get(url)
        if url_id is None:
            url_id = data.ids[url] = len(data.ids) + 1
            data.urls[url_id] = url
        return url_id

    def intern(self, audit_id: AuditId, urls: Iterable[str]) -> Mapping[str, int]:
        with self._lock:
            data = self._data(audit_id)
            return {url: self._intern(data, url) for url in urls}

    def urls(self, audit_id: AuditId, url_ids: Iterable[int]) -> Mapping[int, str]:
        with self._lock:
            known = self._data(audit_id).urls
            return {i: known[i] for i in url_ids if i in known}

    def stream_urls(self, audit_id: AuditId) -> Iterator[tuple[int, str]]:
        with self._lock:
            rows = sorted(self._data(audit_id).urls.items())
        yield from rows

    def write_pages(
        self, audit_id: AuditId, pages: Iterable[PageFacts], *, templates: Mapping[str, str] | None = None
    ) -> int:
        templates = templates or {}
        with self._lock:
            data = self._data(audit_id)
            count = 0
            for page in pages:
                url_id = self._intern(data, page.url)
                data.pages[url_id] = StoredPage(url_id, templates.get(page.url, ""), _without_links(page))
                count += 1
            return count

    def write_links(self, audit_id: AuditId, links: Iterable[tuple[str, Link]]) -> int:
        with self._lock:
            data = self._data(audit_id)
            rows = [
                LinkRow(
                    self._intern(data, source),
                    self._intern(data, link.target),
                    link.kind,
                    link.nofollow,
                    link.internal,
                )
                for source, link in links
            ]
            data.links.extend(rows)
            return len(rows)

    def replace_links(
        self, audit_id: AuditId, source_ids: Iterable[int], links: Iterable[tuple[str, Link]]
    ) -> int:
        with self._lock:
            data = self._data(audit_id)
            dropped = set(source_ids)
            data.links = [row for row in data.links if row.source not in dropped]
            return self.write_links(audit_id, links)

    def pages_by_url(
        self, audit_id: AuditId, urls: Iterable[str], *, links: bool = False
    ) -> Mapping[str, PageFacts]:
        with self._lock:
            data = self._data(audit_id)
            found = {url: data.pages[data.ids[url]].facts for url in urls if data.ids.get(url) in data.pages}
            if not links:
                return found
            wanted = {data.ids[url]: url for url, page in found.items() if page.html is not None}
            outgoing: dict[int, list[Link]] = {url_id: [] for url_id in wanted}
            for row in data.links:
                if row.source in outgoing:
                    outgoing[row.source].append(
                        Link(data.urls[row.target], row.kind, internal=row.internal, nofollow=row.nofollow)
                    )
        for url_id, url in wanted.items():
            page = found[url]
            assert page.html is not None
            found[url] = evolve(page, html=evolve(page.html, links=tuple(outgoing[url_id])))
        return found

    def _append_issues(self, data: _AuditData, issues: Iterable[Issue]) -> int:
        count = 0
        for issue in issues:
            url_id = self._intern(data, issue.url)
            data.issues[next(self._sequence)] = (url_id, evolve(issue, details=_json_copy(issue.details)))
            count += 1
        return count

    def write_issues(self, audit_id: AuditId, issues: Iterable[Issue]) -> int:
        with self._lock:
            return self._append_issues(self._data(audit_id), issues)

    def replace_issues(self, audit_id: AuditId, url_ids: Iterable[int], issues: Iterable[Issue]) -> int:
        with self._lock:
            data = self._data(audit_id)
            dropped = set(url_ids)
            data.issues = {seq: row for seq, row in data.issues.items() if row[0] not in dropped}
            return self._append_issues(data, issues)

    def assign_templates(self, audit_id: AuditId, templates: Iterable[tuple[int, str]]) -> None:
        with self._lock:
            data = self._data(audit_id)
            chosen = dict(templates)
            for url_id, template in chosen.items():
                page = data.pages.get(url_id)
                if page is not None:
                    data.pages[url_id] = evolve(page, template=template)
            for seq, (url_id, issue) in data.issues.items():
                if url_id in chosen:
                    data.issues[seq] = (url_id, evolve(issue, template=chosen[url_id]))

    def seal_counts(
        self, audit_id: AuditId, *, issues: Sequence[Issue] = (), templates: Iterable[tuple[int, str]] = ()
    ) -> None:
        # No counts kept: the lists count the rows in memory, which costs nothing worth sealing.
        self.write_issues(audit_id, issues)
        self.assign_templates(audit_id, templates)  # over the issues just written too, as SQL's join does

    def refresh_statistics(self, audit_id: AuditId) -> None:
        pass  # no planner

    def page_count(self, audit_id: AuditId) -> int:
        with self._lock:
            return len(self._data(audit_id).pages)

    def list_pages(self, audit_id: AuditId, query: PageQuery) -> tuple[Sequence[PageRow], int]:
        with self._lock:
            rows = [
                p
                for _, p in sorted(self._data(audit_id).pages.items())
                if (query.status_code is None or p.facts.status_code == query.status_code)
                and (query.extract is None or query.extract.matches(p.facts.extracted))
            ]
        return [_summary(p) for p in rows[query.offset : query.offset + query.limit]], len(rows)

    def list_issues(self, audit_id: AuditId, query: IssueQuery) -> tuple[Sequence[Issue], int]:
        with self._lock:
            rows = [
                (issue.severity.rank, issue.check_code, url_id, seq, issue)
                for seq, (url_id, issue) in self._data(audit_id).issues.items()
                if (query.check_code is None or issue.check_code == query.check_code)
                and (query.severity is None or issue.severity is query.severity)
                and (query.template is None or issue.template == query.template)
            ]
        rows.sort(key=lambda row: row[:4])
        return [row[4] for row in rows[query.offset : query.offset + query.limit]], len(rows)

    def stream_pages(self, audit_id: AuditId) -> Iterator[StoredPage]:
        with self._lock:
            rows = [p for _, p in sorted(self._data(audit_id).pages.items())]
        yield from rows

    def stream_links(self, audit_id: AuditId) -> Iterator[LinkRow]:
        with self._lock:
            rows = sorted(self._data(audit_id).links, key=lambda link: link.source)
        yield from rows

    def stream_issues(self, audit_id: AuditId) -> Iterator[tuple[int, Issue]]:
        with self._lock:
            rows = [row for _, row in sorted(self._data(audit_id).issues.items())]
        yield from rows

    def stream_page_rows(self, audit_id: AuditId) -> Iterator[PageRow]:
        return (_summary(page) for page in self.stream_pages(audit_id))

    def stream_link_lines(self, audit_id: AuditId) -> Iterator[LinkLine]:
        with self._lock:
            data = self._data(audit_id)
            urls = dict(data.urls)
            rows = sorted(data.links, key=lambda link: link.source)
        for row in rows:
            yield LinkLine(urls[row.source], urls[row.target], row.kind, row.nofollow, row.internal)

    def stream_site_pages(self, audit_id: AuditId) -> Iterator[StoredPage]:
        # The whole facts are held anyway: they carry every field the site checks read.
        return self.stream_pages(audit_id)

    def stream_link_batches(self, audit_id: AuditId) -> Iterator[LinkBatch]:
        rows = list(self.stream_links(audit_id))
        for start in range(0, len(rows), _BATCH):
            chunk = rows[start : start + _BATCH]
            yield LinkBatch(
                sources=array.array("i", [r.source for r in chunk]),
                targets=array.array("i", [r.target for r in chunk]),
                flags=array.array(
                    "b", [link_flags(r.kind, internal=r.internal, nofollow=r.nofollow) for r in chunk]
                ),
            )

    def stream_issue_lines(self, audit_id: AuditId, *, quote: Sequence[str] = ()) -> Iterator[IssueLine]:
        for url_id, issue in self.stream_issues(audit_id):
            yield IssueLine.of(url_id, issue, quote)

    def save_report(self, audit_id: AuditId, report: Report) -> None:
        with self._lock:
            self._reports[audit_id] = report

    def report(self, audit_id: AuditId) -> Report | None:
        with self._lock:
            return self._reports.get(audit_id)

    def save_archived_identities(self, audit_id: AuditId, identities: ArchivedIdentities) -> None:
        with self._lock:
            if audit_id not in self._reports:
                raise KeyError(f"audit {audit_id} has no report to keep identities beside")
            self._identities[audit_id] = identities

    def archived_identities(self, audit_id: AuditId) -> ArchivedIdentities | None:
        with self._lock:
            return self._identities.get(audit_id)

    def save_checkpoint(self, audit_id: AuditId, state: Mapping[str, Any]) -> None:
        with self._lock:
            self._data(audit_id).checkpoint = _json_copy(state)

    def checkpoint(self, audit_id: AuditId) -> Mapping[str, Any] | None:
        with self._lock:
            stored = self._data(audit_id).checkpoint
            return None if stored is None else copy.deepcopy(stored)

    def frontier_add(self, audit_id: AuditId, entries: Iterable[tuple[str, int]]) -> int:
        with self._lock:
            data = self._data(audit_id)
            added = 0
            for url, depth in entries:
                url_id = self._intern(data, url)
                if url_id not in data.frontier:
                    data.frontier[url_id] = FrontierEntry(url_id, url, depth)
                    added += 1
            data.counts[FrontierState.QUEUED] += added
            return added

    def frontier_next(self, audit_id: AuditId, limit: int) -> Sequence[FrontierEntry]:
        with self._lock:
            queued = [e for e in self._data(audit_id).frontier.values() if e.state is FrontierState.QUEUED]
        return sorted(queued, key=lambda e: (e.depth, e.url_id))[:limit]

    def frontier_mark(self, audit_id: AuditId, url_ids: Iterable[int], state: FrontierState) -> int:
        with self._lock:
            data = self._data(audit_id)
            moved = 0
            for url_id in set(url_ids):
                entry = data.frontier.get(url_id)
                if entry is not None and entry.state is not state:
                    data.frontier[url_id] = evolve(entry, state=state)
                    data.counts[entry.state] -= 1
                    moved += 1
            data.counts[state] += moved
            return moved

    def frontier_counts(self, audit_id: AuditId) -> Mapping[FrontierState, int]:
        with self._lock:
            return {state: count for state, count in self._data(audit_id).counts.items() if count}

    def frontier_recount(self, audit_id: AuditId) -> Mapping[FrontierState, int]:
        with self._lock:
            return dict(Counter(e.state for e in self._data(audit_id).frontier.values()))

    def archive(self, audit_id: AuditId) -> None:
        with self._lock:
            self._audits.pop(audit_id, None)


def _summary(page: StoredPage) -> PageRow:
    facts = page.facts
    html = facts.html
    return PageRow(
        url_id=page.url_id,
        url=facts.url,
        status_code=facts.status_code,
        depth=facts.depth,
        title=html.titles[0] if html is not None and html.titles else None,
        meta_description=html.meta_descriptions[0] if html is not None and html.meta_descriptions else None,
        word_count=html.word_count if html is not None else 0,
        blocked_by=facts.blocked_by,
        fetch_error=facts.fetch_error,
        content_type=facts.content_type,
        template=page.template,
        in_sitemap=facts.in_sitemap,
        excluded_by=excluded_by(facts),
        extracted=facts.extracted,
    )
