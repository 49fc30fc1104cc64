# Over 500 lines: every site-scope check of docs/checks.md, one short rule each, in the catalogue's order.
"""Site checks: judged once per audit at finalisation, over every page, link and host-level file.

Link-graph, target, duplicate, sitemap and robots.txt checks need more than one URL's answer. They run
over an `AuditFacts` value in one pass over the pages and one pass over the links, keeping only a small
record per URL, so 100,000 pages and 1,000,000 links fit in memory and time (no pairwise comparisons:
near-duplicates go through MinHash LSH banding).
"""

import array
import operator
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Final, Protocol, Self, TypeVar

from attrs import field, frozen

from siteaudit.domain.checks import page as pagecheck
from siteaudit.domain.checks import url
from siteaudit.domain.checks.page import DETAIL_SAMPLE, issue
from siteaudit.domain.facts import Link, LinkKind, PageFacts, RobotsFacts, SitemapFacts
from siteaudit.domain.issue import Issue, Severity
from siteaudit.domain.thresholds import Thresholds

# Codes whose site-level issue replaces the page check's issue for the same URL (the site decides the
# final severity once it knows the inbound links).
SUPERSEDING_CODES = frozenset({"noindex"})

# Buckets larger than this are confirmed against their first member only, so one huge template family
# cannot make the comparison quadratic.
_ALL_PAIRS_BUCKET = 64
_NO_TARGETS: frozenset[str] = frozenset()  # shared by the pages without hreflang (an empty one is 216 bytes)
_CACHE_LIMIT = 200_000
_TEMPORARY_REDIRECTS = frozenset({302, 303, 307})

# The facts the site checks (and the report's `PageOutcome.from_facts`) read. A store may hand over pages
# with only these set and every other field at its default (a narrow projection of its rows): the findings
# are the same.
SITE_PAGE_FIELDS: Final = frozenset(
    {
        "url",
        "depth",
        "status_code",
        "final_url",
        "redirects",
        "fetch_error",
        "content_type",
        "headers",
        "x_robots_tag",
        "link_canonicals",
        "bytes",
        "blocked_by",
        "in_sitemap",
        "disallowed",
        "resource",
        "html",
    }
)
SITE_HTML_FIELDS: Final = frozenset(
    {
        "titles",
        "meta_descriptions",
        "meta_robots",
        "canonicals",
        "base_href",
        "h1s",
        "hreflangs",
        "fingerprint",
        "sketch",
        "skeleton",  # read by the templates, beside the site checks
    }
)

# A link's kind, internal-ness and nofollow in one small integer (`LinkBatch.flags`): the kind's index here.
LINK_KINDS: Final = tuple(LinkKind)


# `_read_link_table`: a (target, flags) not worked out yet (compared by identity: no target key is it),
# and the flags of a target not linked yet (flags take 5 bits).
_UNSEEN: Final = "\0unseen"
_FLAGS_UNSEEN: Final = 255
_K = TypeVar("_K", bound=str)
# What the links to one (target, flags) do: see `_SiteRun._link_action`.
_LinkAction = str | tuple[str, bool, tuple[str, ...], "_Known"] | None


def link_flags(kind: LinkKind, *, internal: bool, nofollow: bool) -> int:
    """`kind << 2 | internal << 1 | nofollow`, the kind as its index in `LINK_KINDS`."""
    return LINK_KINDS.index(kind) << 2 | internal << 1 | nofollow


@frozen
class LinkBatch:
    """A run of links by URL id, column by column (`flags` as `link_flags` makes them): how a store hands
    over a million links without a string or a `Link` object per link."""

    sources: Sequence[int]
    targets: Sequence[int]
    flags: Sequence[int]


@frozen
class LinkTable:
    """Every link of an audit by URL id. `urls[i]` is the URL of id i (None where no URL has that id);
    `batches` yields the links, iterated once after the pages. Links whose source or target has no URL
    are ignored."""

    urls: Sequence[str | None]
    batches: Iterable[LinkBatch] = field(eq=False)


@frozen
class AuditFacts:
    """Everything the site checks read, shaped so that it can be streamed from storage.

    - `start_url`: the audit's start URL; its host defines internal URLs.
    - `pages`: every URL's facts (HTML pages, redirects, failures, any image or external link target
      the crawler fetched, and URLs it skipped because robots.txt disallows them, with `disallowed` set
      and no status), iterated exactly once. A generator over stored rows is fine. Targets that have no
      facts here are not judged (a link to an unfetched URL is neither broken nor fine).
    - `links`: `(source_url, Link)` for every reference on a crawled page, iterated exactly once after
      `pages`. `AuditFacts.from_pages` derives them from the pages' own HTML facts.
    - `link_table`: the same links by URL id (what a store holds), used instead of `links` when given:
      the findings are the same, without a string or `Link` object per link.
    - `sitemap_urls`: URLs listed in the site's sitemaps (in addition to `PageFacts.in_sitemap`).
    - `sitemaps`: the sitemap documents fetched (declared in robots.txt, conventional paths, indexes).
    - `robots`: the host's robots.txt facts; None when it was not fetched (robots checks are skipped).
    - `llms_txt_found`: whether the site publishes `/llms.txt` (`siteaudit.domain.crawl.llms_txt_found`);
      None when it was not asked or its answer said neither (a 5xx, a network error): nothing is claimed.
    - `listed_urls`: the URLs a list audit was asked for (docs/audits.md): referenced like a sitemap's.
    - `whole_site`: the audit followed links from its start (False for a list or sitemap audit, whose
      link graph is not the site's: no page is called an orphan).
    - `sketch_store`: where the near-duplicate pass keeps the sketches (empty; closed when the checks
      end); None: in memory (`PackedSketches`).
    """

    start_url: str
    pages: Iterable[PageFacts] = field(eq=False)
    links: Iterable[tuple[str, Link]] = field(default=(), eq=False)
    sitemap_urls: Collection[str] = field(default=frozenset(), eq=False)
    sitemaps: tuple[SitemapFacts, ...] = ()
    robots: RobotsFacts | None = None
    llms_txt_found: bool | None = None
    link_table: LinkTable | None = field(default=None, eq=False)
    listed_urls: Collection[str] = field(default=frozenset(), eq=False)
    whole_site: bool = True
    sketch_store: "SketchStore | None" = field(default=None, eq=False)

    @classmethod
    def from_pages(
        cls,
        start_url: str,
        pages: Sequence[PageFacts],
        *,
        sitemap_urls: Collection[str] = frozenset(),
        sitemaps: tuple[SitemapFacts, ...] = (),
        robots: RobotsFacts | None = None,
        llms_txt_found: bool | None = None,
    ) -> Self:
        """Facts held in memory: the links are read from each page's HTML facts."""
        links = ((p.url, link) for p in pages if p.html is not None for link in p.html.links)
        return cls(
            start_url=start_url,
            pages=pages,
            links=links,
            sitemap_urls=sitemap_urls,
            sitemaps=sitemaps,
            robots=robots,
            llms_txt_found=llms_txt_found,
        )


# `_Known.flags`: one bit per boolean of a URL.
_INTERNAL, _REDIRECTED, _FAILED, _TRANSIENT, _CONTENT, _NOINDEX, _DISALLOWED, _IN_SITEMAP, _ALIAS = (
    1 << bit for bit in range(9)
)


class _Flag:
    """One boolean of `_Known`, read from its bit of `flags`."""

    def __init__(self, bit: int) -> None:
        self.bit = bit

    def __get__(self, known: "_Known", owner: type["_Known"] | None = None) -> bool:
        return bool(known.flags & self.bit)


@frozen(weakref_slot=False)
class _Known:
    """What the site checks remember of one fetched URL (`_Known.of`). The audit holds one per URL, so
    its booleans share one integer (`flags`), read through attributes of their names (`_Flag`)."""

    url: str
    status: int | None
    first_status: int | None
    canonical_elsewhere: str | None
    hreflang_targets: frozenset[str]
    size: int
    flags: int
    final: str | None = None  # normalised final URL of a redirect

    @classmethod
    def of(
        cls,
        url: str,
        *,
        internal: bool,
        status: int | None,
        first_status: int | None,
        redirected: bool,
        failed: bool,
        transient: bool,  # challenged or rate-limited: neither broken nor fine
        content: bool,  # HTML answering 2xx
        noindex: bool,
        disallowed: bool,
        canonical_elsewhere: str | None,
        hreflang_targets: frozenset[str],
        size: int,
        in_sitemap: bool,
        final: str | None = None,
        alias: bool = False,  # stands for a redirect's destination that was not fetched on its own
    ) -> "_Known":
        flags = 0
        for bit, value in (
            (_INTERNAL, internal),
            (_REDIRECTED, redirected),
            (_FAILED, failed),
            (_TRANSIENT, transient),
            (_CONTENT, content),
            (_NOINDEX, noindex),
            (_DISALLOWED, disallowed),
            (_IN_SITEMAP, in_sitemap),
            (_ALIAS, alias),
        ):
            if value:
                flags |= bit
        return cls(url, status, first_status, canonical_elsewhere, hreflang_targets, size, flags, final)

    internal = _Flag(_INTERNAL)
    redirected = _Flag(_REDIRECTED)
    failed = _Flag(_FAILED)
    transient = _Flag(_TRANSIENT)
    content = _Flag(_CONTENT)
    noindex = _Flag(_NOINDEX)
    disallowed = _Flag(_DISALLOWED)
    in_sitemap = _Flag(_IN_SITEMAP)
    alias = _Flag(_ALIAS)

    def invalid_reason(self) -> str | None:
        """Why this URL is not a valid canonical or hreflang target, None when it is. A URL robots.txt
        disallows was never requested: it has no status, and that is why."""
        if self.disallowed:
            return "blocked_by_robots_txt"
        if self.failed:
            return "error"
        if self.redirected:
            return "redirect"
        if self.status != 200:
            return "non_200"
        if self.noindex:
            return "noindex"
        if self.canonical_elsewhere is not None:
            return "non_canonical"
        return None


class _Normaliser:
    """`url.normalise` with a bounded memo: navigation links repeat the same targets on every page."""

    def __init__(self) -> None:
        self._memo: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        found = self._memo.get(value)
        if found is None:
            if len(self._memo) >= _CACHE_LIMIT:
                self._memo.clear()
            found = self._memo[value] = url.normalise(value)
        return found


class _Text(str):
    """A title, description or heading as its page wrote it (whitespace collapsed), equal to and hashed as
    its comparison form (`pagecheck.normalise_text`, the written form case-folded). As a group's key it is
    both what the group compares by and what a duplicate issue quotes (the first page's wording), so a page
    costs one string per text instead of a comparison form and a written form beside it."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self.casefold())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.casefold() == other.casefold()


def _join(groups: dict[_K, str | list[str]], key: _K, url: str) -> bool:
    """Add `url` to the group `key`; True when it is the group's first URL. A group of one is its URL, a
    list only from the second member on."""
    members = groups.setdefault(key, url)
    if members is url:
        return True
    if isinstance(members, str):
        groups[key] = [members, url]
    else:
        members.append(url)
    return False


def _members(group: str | list[str]) -> list[str]:
    """A duplicate group's URLs (see `_join`)."""
    return [group] if isinstance(group, str) else group


def check_site(facts: AuditFacts, *, thresholds: Thresholds | None = None) -> list[Issue]:
    """Every link-graph, target, sitemap, duplicate and host-level check of one audit."""
    limits = thresholds if thresholds is not None else Thresholds()
    return _SiteRun(facts, limits).run()


def supersede(page_issues: Iterable[Issue], site_issues: Sequence[Issue]) -> list[Issue]:
    """Page issues plus site issues, where a site issue of a `SUPERSEDING_CODES` code replaces the page
    issue with the same identity (the raised `noindex`)."""
    replaced = {i.identity for i in site_issues if i.check_code in SUPERSEDING_CODES}
    kept = [i for i in page_issues if i.identity not in replaced]
    kept.extend(site_issues)
    return kept


class _SiteRun:
    """One evaluation: the mutable indexes live here, the inputs and outputs stay immutable values."""

    def __init__(self, facts: AuditFacts, limits: Thresholds) -> None:
        self.facts = facts
        self.limits = limits
        self.normalise = _Normaliser()
        self.start = url.normalise(facts.start_url)
        self.host = url.host(facts.start_url)
        self.origin = url.origin(facts.start_url)
        self.listed = {url.normalise(u) for u in facts.sitemap_urls}
        self.asked = {url.normalise(u) for u in facts.listed_urls}
        self.known: dict[str, _Known] = {}
        self.linked: set[str] = set()
        self.issues: list[Issue] = []
        self.canonicals: list[tuple[str, str]] = []  # (page url, canonical elsewhere)
        self.hreflangs: list[tuple[str, str, str, str]] = []  # (page url, own url, lang, target)
        # Duplicate groups: text (or fingerprint) -> its URLs. A group is its one URL until a second page
        # joins it (`_join`), so the many groups of one page each cost no list. A text group's key is the
        # first page's own wording, compared by its comparison form (`_Text`).
        self.titles: dict[_Text, str | list[str]] = {}
        self.descriptions: dict[_Text, str | list[str]] = {}
        self.h1s: dict[_Text, str | list[str]] = {}
        self.fingerprints: dict[str, str | list[str]] = {}
        # One sketch per fingerprint group, and that group's key at the same index (no tuple per page).
        self.sketches: SketchStore = (
            PackedSketches() if facts.sketch_store is None else facts.sketch_store  # an empty one is falsy
        )
        self.sketch_groups: list[str] = []

    def run(self) -> list[Issue]:
        for page in self.facts.pages:
            self._read_page(page)
        self._alias_redirect_targets()
        if self.facts.link_table is not None:
            self._read_link_table(self.facts.link_table)
        else:
            self._read_links()
        self.normalise = _Normaliser()  # its memo served the two passes
        self._after_links()
        self._targets()
        # Each index is dropped once read for the last time, so that the near-duplicate pass's band tables
        # come on top of the fingerprint groups only, not of every URL's record and text groups.
        self.known, self.linked, self.canonicals, self.hreflangs = {}, set(), [], []
        self._duplicates()
        self.titles, self.descriptions, self.h1s = {}, {}, {}
        try:
            self._near_duplicates()
        finally:
            self.sketches.close()
        self._host_files()
        return self.issues

    # --- pass 1: pages ------------------------------------------------------------------------------

    def _read_page(self, page: PageFacts) -> None:
        key = self.normalise(page.url)
        if key in self.known:
            return  # the same URL stored twice would otherwise duplicate itself
        found = pagecheck.directives(page)
        content = pagecheck.is_content_page(page)
        elsewhere = None
        if content:  # `pagecheck.canonical_elsewhere`, with the page's own URL through the memo
            canonical = pagecheck.effective_canonical(page)
            if canonical is not None and canonical != self.normalise(page.final_url or page.url):
                elsewhere = canonical
        targets: list[str] = []
        if content and page.html is not None and page.html.hreflangs:
            own = self.normalise(page.final_url or page.url)  # `pagecheck.own_url`
            for entry in page.html.hreflangs:
                if entry.target is not None:
                    targets.append(self.normalise(entry.target))
                    self.hreflangs.append((page.url, own, entry.lang, targets[-1]))
        record = _Known.of(
            page.url,
            internal=url.host(page.url) == self.host,
            status=page.status_code,
            first_status=pagecheck.first_status(page),
            redirected=bool(page.redirects),
            failed=pagecheck.is_failed(page) and not pagecheck.is_rate_limited(page),
            transient=page.blocked_by is not None or pagecheck.is_rate_limited(page),
            content=content,
            noindex=found.noindex and page.blocked_by is None and 200 <= (page.status_code or 0) < 300,
            disallowed=page.disallowed,
            canonical_elsewhere=elsewhere,
            hreflang_targets=frozenset(targets) if targets else _NO_TARGETS,
            size=pagecheck.declared_size(page),
            in_sitemap=page.in_sitemap or key in self.listed,
            final=self.normalise(page.final_url) if page.redirects and page.final_url else None,
        )
        self.known[key] = record
        if elsewhere is not None:
            self.canonicals.append((page.url, elsewhere))
        if record.in_sitemap:
            self._sitemap_entry(page, record)
        if content and record.internal and page.depth >= self.limits.deep_page_depth:
            self.issues.append(
                issue("deep_page", page.url, depth=page.depth, limit=self.limits.deep_page_depth)
            )
        if page.html is not None and pagecheck.indexable_given(
            page, noindex=found.noindex, elsewhere=elsewhere
        ):
            html = page.html
            for groups, texts in (
                (self.titles, html.titles),
                (self.descriptions, html.meta_descriptions),
                (self.h1s, html.h1s),
            ):
                if texts and texts[0].strip():
                    _join(groups, _Text(" ".join(texts[0].split())), page.url)
            group = html.fingerprint or f"url:{page.url}"
            if _join(self.fingerprints, group, page.url) and html.sketch:
                self.sketches.append(html.sketch)
                self.sketch_groups.append(group)

    def _sitemap_entry(self, page: PageFacts, record: _Known) -> None:
        if record.transient:
            return
        if record.noindex:
            self.issues.append(issue("sitemap_url_noindex", page.url))
        if record.redirected:
            self.issues.append(
                issue(
                    "sitemap_url_non_200",
                    page.url,
                    Severity.WARNING,
                    status=record.first_status,
                    final_url=page.final_url,
                )
            )
        elif record.failed:
            self.issues.append(
                issue(
                    "sitemap_url_non_200",
                    page.url,
                    Severity.ERROR,
                    status=record.status,
                    reason=pagecheck.plain(page.fetch_error),
                )
            )
        if record.canonical_elsewhere is not None:
            self.issues.append(
                issue("sitemap_url_non_canonical", page.url, canonical=record.canonical_elsewhere)
            )
        if record.disallowed:
            self.issues.append(issue("sitemap_url_blocked", page.url))

    def _alias_redirect_targets(self) -> None:
        """A redirect's destination answers like the redirect's final response when it was not fetched
        on its own, so links to it are judged by what it answered."""
        aliases: dict[str, _Known] = {}
        for record in self.known.values():
            if not record.redirected or record.status is None:
                continue
            destination = record.final
            if destination is not None and destination not in self.known and destination not in aliases:
                aliases[destination] = _evolve_final(record, destination)
        self.known.update(aliases)

    # --- pass 2: links ------------------------------------------------------------------------------

    def _read_links(self) -> None:
        emitted: set[tuple[str, str, str]] = set()
        temporary: dict[str, _Known] = {}
        normalise = self.normalise
        known = self.known
        for source, link in self.facts.links:
            target = normalise(link.target)
            is_anchor = link.kind is LinkKind.A
            if is_anchor and link.internal and target != normalise(source):
                self.linked.add(target)
            record = known.get(target)
            if record is None or record.transient:
                continue
            if is_anchor and link.internal and record.redirected:
                if record.final is not None:
                    self.linked.add(record.final)  # the destination is reachable through the link
                if record.first_status in _TEMPORARY_REDIRECTS and not record.alias:
                    temporary.setdefault(target, record)
            for code in _link_codes(link, record, self.limits):
                marker = (code, source, target)
                if marker in emitted:
                    continue
                emitted.add(marker)
                self.issues.append(_link_issue(code, source, link, record))
        for record in temporary.values():
            self.issues.append(issue("redirect_temporary", record.url, status=record.first_status))

    def _read_link_table(self, table: LinkTable) -> None:
        """`_read_links` over links by id, with the same findings in the same order.

        What a link does depends on its target and flags alone, except for the self-link test and the
        source named in an issue, so it is worked out once per distinct (target, flags) and each link then
        costs a look-up. Nearly every target is linked with one flags value: that one's action is kept by
        the target's id in two columns (9 bytes a URL), the others in a dictionary.
        """
        emitted: set[tuple[str, int, str]] = set()
        temporary: dict[str, _Known] = {}
        normalise = self.normalise
        linked = self.linked
        urls = table.urls
        known_ids = len(urls)
        # What the links to a target do (`_link_action`): most only count towards `linked`, and that is
        # their target key alone (no tuple per distinct target). By target id, for the first flags seen
        # (`_FLAGS_UNSEEN` until then); (target, flags) -> action for any other flags.
        first_flags = bytearray([_FLAGS_UNSEEN]) * known_ids
        first_actions: list[_LinkAction] = [None] * known_ids
        actions: dict[int, _LinkAction] = {}
        last_source = -1
        source_key = ""
        source_url: str | None = None
        for batch in table.batches:
            for source, target, flags in zip(batch.sources, batch.targets, batch.flags, strict=True):
                if source != last_source:
                    last_source = source
                    source_url = urls[source] if 0 < source < known_ids else None
                    source_key = "" if source_url is None else normalise(source_url)
                if source_url is None:
                    continue
                if not 0 < target < known_ids:
                    continue  # no URL: ignored
                seen = first_flags[target]
                if seen == flags:
                    action = first_actions[target]
                elif seen == _FLAGS_UNSEEN:
                    first_flags[target] = flags
                    action = first_actions[target] = self._link_action(target, flags, urls, temporary)
                else:
                    action = actions.get(target << 5 | flags, _UNSEEN)
                    if action is _UNSEEN:
                        action = actions[target << 5 | flags] = self._link_action(
                            target, flags, urls, temporary
                        )
                if action is None:
                    continue
                if isinstance(action, str):
                    if action != source_key:
                        linked.add(action)
                    continue
                target_key, counts, codes, record = action
                if counts and target_key != source_key:
                    linked.add(target_key)
                for code in codes:
                    marker = (code, source, target_key)
                    if marker in emitted:
                        continue
                    emitted.add(marker)
                    link = Link(
                        target=urls[target] or "",
                        kind=LINK_KINDS[flags >> 2],
                        internal=bool(flags & 2),
                        nofollow=bool(flags & 1),
                    )
                    self.issues.append(_link_issue(code, source_url, link, record))
        for record in temporary.values():
            self.issues.append(issue("redirect_temporary", record.url, status=record.first_status))

    def _link_action(
        self,
        target: int,
        flags: int,
        urls: Sequence[str | None],
        temporary: dict[str, _Known],
    ) -> "_LinkAction":
        """What every link to `target` with `flags` does (see `_read_link_table`): None, nothing at all;
        the target key, it counts towards `linked` (unless a self-link) and raises nothing; else (target
        key, whether it counts, the issue codes it raises, the target's record)."""
        target_url = urls[target]
        if target_url is None:
            return None
        key = self.normalise(target_url)
        kind = LINK_KINDS[flags >> 2]
        internal = bool(flags & 2)
        counts = kind is LinkKind.A and internal
        record = self.known.get(key)
        if record is None or record.transient:
            return key if counts else None
        if counts and record.redirected:
            if record.final is not None:
                self.linked.add(record.final)
            if record.first_status in _TEMPORARY_REDIRECTS and not record.alias:
                temporary.setdefault(key, record)
        link = Link(target=target_url, kind=kind, internal=internal, nofollow=bool(flags & 1))
        codes = _link_codes(link, record, self.limits)
        if not codes:
            return key if counts else None
        return (key, counts, codes, record)

    # --- after both passes --------------------------------------------------------------------------

    def _after_links(self) -> None:
        for key, record in self.known.items():
            if record.transient or record.alias:
                continue  # aliases of redirect destinations are judged through their redirect
            referenced = key in self.linked or record.in_sitemap or key == self.start or key in self.asked
            if (
                record.internal
                and not record.redirected
                and record.status is not None
                and 400 <= record.status < 500
                and referenced
            ):
                self.issues.append(
                    issue("http_4xx", record.url, status=record.status, linked=key in self.linked)
                )
            if record.noindex and (key in self.linked or record.in_sitemap):
                self.issues.append(
                    issue(
                        "noindex",
                        record.url,
                        Severity.WARNING,
                        in_sitemap=record.in_sitemap,
                        has_inlinks=key in self.linked,
                    )
                )
            if record.disallowed and record.internal and (key in self.linked or record.in_sitemap):
                self.issues.append(
                    issue(
                        "blocked_by_robots_txt",
                        record.url,
                        linked=key in self.linked,
                        in_sitemap=record.in_sitemap,
                    )
                )
            if (
                self.facts.whole_site
                and record.in_sitemap
                and record.content
                and record.internal
                and key not in self.linked
                and key != self.start
            ):
                self.issues.append(issue("orphan_page", record.url))

    def _targets(self) -> None:
        for page_url, canonical in self.canonicals:
            target = self.known.get(canonical)
            if target is None or target.transient:
                continue
            if target.failed:
                self.issues.append(
                    issue("canonical_target_error", page_url, canonical=canonical, status=target.status)
                )
            elif target.redirected:
                self.issues.append(
                    issue(
                        "canonical_target_redirect",
                        page_url,
                        canonical=canonical,
                        status=target.first_status,
                    )
                )
            elif target.noindex or target.disallowed:
                reason = "noindex" if target.noindex else "blocked_by_robots_txt"
                self.issues.append(
                    issue("canonical_target_noindex", page_url, canonical=canonical, reason=reason)
                )
            elif target.canonical_elsewhere is not None:
                self.issues.append(
                    issue(
                        "canonical_chain",
                        page_url,
                        canonical=canonical,
                        next_canonical=target.canonical_elsewhere,
                    )
                )
        seen: set[tuple[str, str, str]] = set()
        for page_url, own, lang, target_url in self.hreflangs:
            if target_url == own:
                continue
            target = self.known.get(target_url)
            if target is None or target.transient:
                continue
            invalid = target.invalid_reason()
            code: str | None = "hreflang_target_invalid" if invalid is not None else None
            if code is None and own not in target.hreflang_targets:
                code = "hreflang_missing_return"
            if code is None or (code, page_url, target_url) in seen:
                continue
            seen.add((code, page_url, target_url))
            details: dict[str, object] = {"target": target_url, "hreflang": lang}
            if invalid is not None:
                details["reason"] = invalid
                details["status"] = target.first_status
            self.issues.append(issue(code, page_url, **details))

    def _duplicates(self) -> None:
        for code, groups, label in (
            ("title_duplicate", self.titles, "title"),
            ("meta_description_duplicate", self.descriptions, "description"),
            ("h1_duplicate", self.h1s, "h1"),
        ):
            for text, urls in groups.items():
                # Quoted as the first page wrote it: the comparison form is case-folded.
                self._emit_group(code, urls, **{label: str(text)})
        for group, urls in self.fingerprints.items():
            if not group.startswith("url:"):
                self._emit_group("duplicate_content_exact", urls, fingerprint=group)

    def _emit_group(self, code: str, urls: str | list[str], **details: object) -> None:
        if isinstance(urls, str):
            return  # one page alone: no duplicate
        for page_url in urls:
            others = [other for other in urls[: DETAIL_SAMPLE + 1] if other != page_url][:DETAIL_SAMPLE]
            self.issues.append(issue(code, page_url, count=len(urls), others=others, **details))

    def _near_duplicates(self) -> None:
        """MinHash LSH: sketches sharing one band land in one bucket; candidates are then confirmed by
        their estimated Jaccard similarity. One sketch per exact-duplicate group, so exact copies never
        count as near ones."""
        rows = self.limits.near_duplicate_band_rows
        # One band at a time, its table keyed by the band's values themselves (packed bytes, or a tuple when
        # the sketch did not fit 64 bits: `SketchStore.band`) and dropped before the next: only buckets of two or
        # more outlive it. A bucket is its first member's index until a second one arrives, so the hundred thousand
        # buckets of one member each cost no list. (All 32 tables at once held 4 KB a page: 2 GB at 500,000.)
        buckets: list[tuple[int, int, list[int]]] = []
        band = 0
        while True:
            table: dict[bytes | tuple[int, ...], int | list[int]] = {}
            get = table.get
            for index, key in self.sketches.band(band * rows, (band + 1) * rows):
                bucket = get(key)
                if bucket is None:
                    table[key] = index
                elif bucket.__class__ is int:
                    table[key] = [bucket, index]
                else:
                    bucket.append(index)  # type: ignore[union-attr]
            if not table:
                break
            buckets.extend(
                (members[0], band, members) for members in table.values() if isinstance(members, list)
            )
            del table, get
            band += 1
        # Buckets in the order they were opened (by first member, then band), as one table would list them.
        buckets.sort()
        compared: set[tuple[int, int]] = set()
        partners: dict[int, dict[int, float]] = {}
        families: set[tuple[int, ...]] = set()
        for _, _, members in buckets:
            family = tuple(members)
            if family in families:
                continue  # near-identical pages share most bands: compare each such family once
            families.add(family)
            if len(members) <= _ALL_PAIRS_BUCKET:
                pairs: Iterator[tuple[int, int]] = (
                    (a, b) for i, a in enumerate(members) for b in members[i + 1 :]
                )
            else:
                pairs = ((members[0], b) for b in members[1:])
            for a, b in pairs:
                pair = (a, b) if a < b else (b, a)
                if pair in compared:
                    continue
                compared.add(pair)
                similarity = _similarity(self.sketches.values(a), self.sketches.values(b))
                if similarity >= self.limits.near_duplicate_similarity:
                    partners.setdefault(a, {})[b] = similarity
                    partners.setdefault(b, {})[a] = similarity
        for index, found in sorted(partners.items()):
            group = self.sketch_groups[index]
            similar: list[str] = []
            for other in sorted(found, key=lambda o: -found[o]):
                similar.extend(_members(self.fingerprints[self.sketch_groups[other]]))
                if len(similar) >= DETAIL_SAMPLE:
                    break
            for page_url in _members(self.fingerprints[group]):
                self.issues.append(
                    issue(
                        "duplicate_content_near",
                        page_url,
                        similar_to=similar[:DETAIL_SAMPLE],
                        similarity=round(max(found.values()), 3),
                        count=len(found),
                    )
                )

    def _host_files(self) -> None:
        robots_url = f"{self.origin}/robots.txt"
        robots = self.facts.robots
        if robots is not None:
            status = robots.status_code
            if robots.fetch_error is not None or (status is not None and status >= 500):
                self.issues.append(
                    issue(
                        "robots_txt_unreachable",
                        robots_url,
                        status=status,
                        reason=pagecheck.plain(robots.fetch_error),
                    )
                )
            elif status is not None and 400 <= status < 500 and status != 429:
                self.issues.append(issue("robots_txt_missing", robots_url, status=status))
            elif status == 200:
                if robots.disallow_all_groups:
                    self.issues.append(
                        issue(
                            "robots_txt_disallow_all",
                            robots_url,
                            user_agents=list(robots.disallow_all_groups),
                        )
                    )
                too_large = robots.bytes > self.limits.robots_txt_max_bytes
                if robots.invalid_lines or too_large:
                    self.issues.append(
                        issue(
                            "robots_txt_invalid",
                            robots_url,
                            lines=list(robots.invalid_lines[:DETAIL_SAMPLE]),
                            invalid_lines=len(robots.invalid_lines),
                            bytes=robots.bytes,
                            too_large=too_large,
                        )
                    )
                if robots.ai_crawlers_blocked:
                    self.issues.append(
                        issue("ai_crawler_blocked", robots_url, user_agents=list(robots.ai_crawlers_blocked))
                    )
        declared = robots is not None and bool(robots.sitemaps)
        if not declared and not any(s.status_code == 200 for s in self.facts.sitemaps):
            self.issues.append(issue("sitemap_missing", f"{self.origin}/sitemap.xml"))
        for sitemap in self.facts.sitemaps:
            problems = list(sitemap.problems)
            if not problems and sitemap.found_via != "conventional" and sitemap.status_code != 200:
                problems.append(f"http_{sitemap.status_code}" if sitemap.status_code else "unreachable")
            if problems:
                self.issues.append(
                    issue("sitemap_invalid", sitemap.url, problems=problems, found_via=sitemap.found_via)
                )
        if self.facts.llms_txt_found is False:
            self.issues.append(issue("llms_txt_missing", f"{self.origin}/llms.txt"))


def _link_codes(link: Link, record: _Known, limits: Thresholds) -> tuple[str, ...]:
    """The target checks a link triggers on its source page. Each is judged on its own condition, so a
    link to a redirect that ends on a broken page is both a link to a redirect and a broken link."""
    if link.kind is LinkKind.A:
        codes: tuple[str, ...] = ()
        if record.failed:
            codes += ("broken_internal_link" if link.internal else "broken_external_link",)
        if link.internal and record.redirected:
            codes += ("internal_link_to_redirect",)
        return codes
    if link.kind is LinkKind.IMG:
        if record.failed:  # no image was served, so it has no size to judge
            return ("img_broken",) if link.internal else ()
        if record.size > limits.image_max_bytes:
            return ("img_too_large",)
    return ()


def _link_issue(code: str, source: str, link: Link, record: _Known) -> Issue:
    details: dict[str, object] = {"target": link.target, "status": record.status}
    if code == "internal_link_to_redirect":
        details["status"] = record.first_status
    if code == "img_too_large":
        details["bytes"] = record.size
    return issue(code, source, **details)


def _evolve_final(record: _Known, destination: str) -> _Known:
    """The redirect's destination, not fetched on its own, stands with the redirect's answer: neither
    redirected, disallowed nor in the sitemap, and marked an alias."""
    kept = record.flags & (_INTERNAL | _FAILED | _TRANSIENT | _CONTENT | _NOINDEX)
    return _Known(
        destination,
        record.status,
        record.status,
        record.canonical_elsewhere,
        record.hreflang_targets,
        record.size,
        kept | _ALIAS,
    )


class SketchStore(Protocol):
    """Where the near-duplicate pass keeps the audit's sketches (one per exact-duplicate group, by index in
    the order appended) until it reads them back: every sketch's band once per band, then the values of
    the candidate pairs only. `PackedSketches` holds them in memory; a finaliser may keep them elsewhere
    (`services/finalize.py` spills them to a temporary file): the findings are the same."""

    def __len__(self) -> int: ...

    def append(self, sketch: tuple[int, ...]) -> None: ...

    def band(self, first: int, last: int) -> Iterator[tuple[int, bytes | tuple[int, ...]]]:
        """(index, values `first` to `last` as a band key) of every sketch of at least `last` values, in
        index order. Two keys are equal exactly when their values are: packed bytes of one width for all,
        or a tuple for a sketch with a value beyond 64 bits (equal to no packed key)."""
        ...

    def values(self, index: int) -> Sequence[int]:
        """The sketch's values."""
        ...

    def close(self) -> None:
        """Done with the sketches: whatever holds them is released."""
        ...


class PackedSketches:
    """A `SketchStore` in memory, one object each: its values packed as unsigned integers of `width`
    little-endian bytes, the fewest that hold the largest value seen so far (MinHash values of 32 bits
    with a rotation of the densified bins above them take 5 bytes of the 8 a 64-bit packing spends).
    Every packed sketch has the same width (a wider newcomer re-packs those before it, one at a time), so
    a band's bytes are equal exactly when its values are. A sketch with a value beyond 64 bits stays a
    tuple, which shares a band with no packed sketch."""

    def __init__(self) -> None:
        self.width = 1
        self.items: list[bytes | tuple[int, ...]] = []

    def __len__(self) -> int:
        return len(self.items)

    def append(self, sketch: tuple[int, ...]) -> None:
        try:
            packed = array.array("Q", sketch).tobytes()
        except OverflowError:
            self.items.append(sketch)
            return
        width = max(1, (max(sketch).bit_length() + 7) // 8)
        if width > self.width:
            items, old = self.items, self.width
            for index, item in enumerate(items):  # in place: one sketch at a time is held twice
                if isinstance(item, bytes):
                    items[index] = _repack(item, old, width)
            self.width = width
        self.items.append(_repack(packed, 8, self.width))

    def band(self, first: int, last: int) -> Iterator[tuple[int, bytes | tuple[int, ...]]]:
        low, high = first * self.width, last * self.width
        for index, sketch in enumerate(self.items):
            if sketch.__class__ is bytes:
                if len(sketch) >= high:
                    yield index, sketch[low:high]
            elif len(sketch) >= last:  # a tuple: a value beyond 64 bits
                yield index, sketch[first:last]

    def values(self, index: int) -> Sequence[int]:
        item = self.items[index]
        if isinstance(item, tuple):
            return item
        return memoryview(_repack(item, self.width, 8)).cast("Q")

    def close(self) -> None:
        self.items = []


def _repack(data: bytes, width: int, to: int) -> bytes:
    """Little-endian unsigned values of `width` bytes each as values of `to` bytes (each value fits)."""
    if width == to:
        return data
    out = bytearray(len(data) // width * to)
    for byte in range(min(width, to)):
        out[byte::to] = data[byte::width]
    return bytes(out)


def _similarity(left: Sequence[int], right: Sequence[int]) -> float:
    """Estimated Jaccard similarity of two MinHash sketches: the share of equal positions."""
    if len(left) != len(right) or not left:
        return 0.0
    equal: int = sum(map(operator.eq, left, right))
    return equal / len(left)
