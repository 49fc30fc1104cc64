# Over 500 lines: URL templates and the layout vote that forms small templates are one inference (docs/templates.md).
"""URL templates: which crawled URLs are pages of the same kind (`/blog/[slug]`, `/products/[id]`).

How templates are inferred
==========================

Only the path of each URL counts: the scheme, host, query string and fragment are ignored, empty
segments are dropped (`/blog//a/` is `/blog/a`) and the root path is the template `/`. The set of
distinct paths is arranged as a tree of path segments and the tree is simplified from the root down,
one position at a time. At every node, the child segments are sorted into kinds by their shape:

==========  =======================================================  ==============================
kind        shape                                                    parameter name
==========  =======================================================  ==============================
numeric     digits only (`42`, `2024`)                               `[id]`; `[year]`, `[month]`,
                                                                     `[day]` for calendar paths;
                                                                     `[page]` after `page` or `p`
uuid        `8-4-4-4-12` hexadecimal groups                          `[uuid]`
date        `2024-05-17` or `2024-05`                                `[date]`
hash        12 or more hexadecimal characters with a digit           `[hash]`
language    an ISO 639-1 code, optionally with a region or script   `[lang]`
            (`en`, `pt-BR`, `zh-hant`)
free text   anything else (`about`, `first-post`)                    `[slug]`
==========  =======================================================  ==============================

1. Numeric, uuid, date and hash segments are data, never section names: each kind becomes one parameter
   even when only one such child exists, so `/products/7` is already `/products/[id]`. A numeric
   parameter is `[id]` unless its values read as a calendar: `[year]` when most values are years
   1900-2099 *and* either there are at least `MIN_SIBLINGS` of them or zero-padded months follow
   (`/2024/05/...`); `[month]` and `[day]` below a year. One value never decides `[year]`, so a name
   does not flip when siblings arrive (`/products/1900` is an `[id]` alone and beside `/products/1`),
   and a few odd values do not rename a large section (`/archive/1` among a hundred years).
2. Language codes are short words too (`it`, `no`), so they become `[lang]` only when at least two
   siblings look like language codes (`/en/...` and `/de/...`).
3. Free-text siblings become `[slug]` only when there are *many* of them: at least
   `MIN_SIBLINGS` (5), or `MIN_TOP_LEVEL_SIBLINGS` (20) at top-level positions (directly under the
   root, or directly under a root-level `[lang]` or `[slug]`), because top-level pages (`/about`,
   `/contact`, `/pricing`) are usually hand-made and each its own template.
   Among many free-text siblings, a *section* stays literal while the others become `[slug]`: a child
   that heads pages of its own kind, that is with at least `MIN_SIBLINGS` distinct children (counting
   each parameter kind once, like `/blog/category` above `/blog/category/news`, ...), or with data
   children (`/products/7`), or with language versions (`/docs/en`, `/docs/de`). So a crowded root does
   not swallow its catalogue, documentation tree or recipe collection: only the pages that live at the
   root share the root-level `[slug]`. When the sections are themselves many (at least the position's
   threshold: `/users/alice/...`, `/users/bob/...`, or twenty-five category directories at the root),
   every free-text sibling becomes `[slug]`.
4. Siblings that became one parameter are merged (their subtrees are united) and the simplification
   continues below the merged node, so `/docs/en/install` and `/docs/de/setup` give `/docs/[lang]/...`
   and the pages below are judged together.

5. Below a section, free-text siblings fewer than the threshold still form `[slug]` when their pages share
   a layout: each page whose skeleton (`infer_page_templates`; "" unknown) another sibling shares joins
   it. At top-level positions only the count decides.
6. When one-off pages at a top-level position become `[slug]`, only the pages join it: what lies below
   each stays under its own literal path (no catch-all `/[slug]/[slug2]` of unrelated small sections).
7. A word parameter (`[slug]`, `[lang]`) whose value is the same for every page of a template is written
   as that value (`/about/team`, not `/[slug]/team`). Data parameters keep their name, so `/products/7`
   is `/products/[id]` before its siblings arrive.

So `/blog/x` and `/shop/y` stay apart (two top-level sections), `/about` and `/contact` stay literal,
and a parameter name that repeats in one template gets a number (`/[slug]/[slug2]`). Which URLs of an
audit shape templates at all (HTML pages, not errors, redirects or resources) is `infer_site_templates`;
docs/templates.md tells the whole story.

Properties: the result depends only on the *set* of paths (the order of the input and duplicates do
not matter); every decision is a count compared with a fixed threshold, so adding a few pages changes
other pages' templates only when it carries a count across a threshold; the work is one pass to build
the tree plus merges that move each node at most once per level, so about linear in the number of URLs.

A URL that was not among the inferred set is matched the same way: a literal segment first, else the
parameter of its kind at that position, else `[slug]` if the position has one, else the literal segment.
"""

import enum
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Final

from attrs import frozen

MIN_SIBLINGS: Final = 5
MIN_TOP_LEVEL_SIBLINGS: Final = 20
MIN_LANGUAGE_SIBLINGS: Final = 2

NUMERIC: Final = "numeric"
UUID: Final = "uuid"
DATE: Final = "date"
HASH: Final = "hash"
LANG: Final = "lang"
SLUG: Final = "slug"

# Kinds that are parameters even alone: their shape never names a section.
_ALWAYS_PARAMETER: Final = frozenset({NUMERIC, UUID, DATE, HASH})

_UUID_RE: Final = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DATE_RE: Final = re.compile(r"(19|20)\d\d-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?")
_HASH_RE: Final = re.compile(r"[0-9a-fA-F]{12,}")
_LANG_RE: Final = re.compile(r"([a-zA-Z]{2})(?:[-_]([a-zA-Z]{2}|[a-zA-Z]{4}))?")
_ISO_639_1_CODES: Final = """
    aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de
    dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie
    ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg
    mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro
    ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty
    ug uk ur uz ve vi vo wa wo xh yi yo za zh zu"""
_ISO_639_1: Final = frozenset(_ISO_639_1_CODES.split())
# RFC 3986 split, as urllib.parse.urlsplit but several times faster on 100,000 URLs: scheme, authority,
# then the path up to the query or fragment.
_PATH_RE: Final = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?(?://[^/?#]*)?([^?#]*)")
_PAGINATION_WORDS: Final = frozenset({"page", "p"})


def segment_kind(segment: str) -> str:
    """The shape of one path segment: numeric, uuid, date, hash, lang or slug."""
    if segment.isdigit() and segment.isascii():
        return NUMERIC
    if _UUID_RE.fullmatch(segment):
        return UUID
    if _DATE_RE.fullmatch(segment):
        return DATE
    if _HASH_RE.fullmatch(segment) and any(c.isdigit() for c in segment):
        return HASH
    match = _LANG_RE.fullmatch(segment)
    if match and match.group(1).lower() in _ISO_639_1:
        return LANG
    return SLUG


def path_segments(url: str) -> tuple[str, ...]:
    """The non-empty path segments of a URL (or of a bare path); query and fragment ignored."""
    match = _PATH_RE.match(url)
    path = match.group(1) if match else ""
    return tuple(filter(None, path.split("/")))


class _Node:
    """A mutable tree node used while inferring; the result is frozen into `TemplateNode`s."""

    __slots__ = ("children", "params", "skeleton", "terminal", "values")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}  # literal segment -> node
        self.params: dict[str, _Node] = {}  # kind -> merged node
        self.values: set[str] = set()  # segments merged into this node when it is a parameter
        self.terminal = False  # a page's path ends here
        self.skeleton = ""  # the page's structural fingerprint ("" unknown); the least when merged


def _merge_into(target: _Node, source: _Node) -> None:
    target.terminal |= source.terminal
    if source.skeleton and (not target.skeleton or source.skeleton < target.skeleton):
        target.skeleton = source.skeleton
    for key, child in source.children.items():
        mine = target.children.get(key)
        if mine is None:
            target.children[key] = child
        else:
            _merge_into(mine, child)
    for kind, child in source.params.items():
        mine = target.params.get(kind)
        if mine is None:
            target.params[kind] = child
        else:
            mine.values |= child.values
            _merge_into(mine, child)


def _merge_all(nodes: list[_Node]) -> _Node:
    # Merge the smaller trees into the largest so each node moves at most once per merge.
    nodes.sort(key=lambda n: len(n.children) + len(n.params), reverse=True)
    target = nodes[0]
    for other in nodes[1:]:
        _merge_into(target, other)
    return target


def _distinct_children(node: _Node) -> int:
    # Each always-parameter kind counts once: a product with many numeric review pages is not a hub.
    distinct: set[str] = set()
    for key in node.children:
        kind = segment_kind(key)
        distinct.add(kind if kind in _ALWAYS_PARAMETER else "=" + key)
    return len(distinct)


def _is_section(node: _Node) -> bool:
    """Whether a free-text child heads pages of its own kind: many distinct children (a hub such as
    `/blog/category`), or data below it (`/products/7`), or language versions (`/docs/en`, `/docs/de`)."""
    langs = 0
    for key in node.children:
        kind = segment_kind(key)
        if kind in _ALWAYS_PARAMETER:
            return True
        if kind == LANG:
            langs += 1
            if langs >= MIN_LANGUAGE_SIBLINGS:
                return True
    return _distinct_children(node) >= MIN_SIBLINGS


def _alike_pages(node: _Node, keys: list[str]) -> list[str]:
    """The pages among `keys` whose HTML shares its skeleton with another of them: a few pages cut from
    one template below a section (`/products/brass-mantel`, `/products/oak-cuckoo`) are one template
    however few they are."""
    by_skeleton: dict[str, list[str]] = {}
    for key in keys:
        child = node.children[key]
        if child.terminal and child.skeleton:
            by_skeleton.setdefault(child.skeleton, []).append(key)
    return sorted(key for alike in by_skeleton.values() if len(alike) >= 2 for key in alike)


def _collapse(node: _Node, kind: str, keys: list[str], *, keep_subtrees: bool = False) -> None:
    """Make `keys` one parameter of `kind`. With `keep_subtrees` (one-off pages at a top-level position),
    only the pages themselves join the parameter: what lies below each stays under its own literal path,
    so unrelated small sections (`/legal/*`, `/tips/*`) are not united into a catch-all `/[slug]/[slug2]`."""
    taken: list[_Node] = []
    values: set[str] = set()
    for key in keys:
        child = node.children[key]
        if keep_subtrees and (child.children or child.params):
            if child.terminal:
                page = _Node()
                page.terminal, page.skeleton = True, child.skeleton
                taken.append(page)
                values.add(key)
                child.terminal = False  # the page itself is reached through the parameter
            continue
        taken.append(node.children.pop(key))
        values.add(key)
    if not taken:
        return
    existing = node.params.get(kind)
    if existing is not None:
        taken.append(existing)
        values |= existing.values
    merged = _merge_all(taken)
    merged.values = values
    node.params[kind] = merged


def _simplify(root: _Node) -> None:
    # Top-down, iterative (deep paths must not hit the recursion limit). A node is simplified before its
    # children, so the children merged at one position are still raw trees. `top_level` marks positions
    # judged with the top-level threshold.
    stack: list[tuple[_Node, bool]] = [(root, True)]
    while stack:
        node, top_level = stack.pop()
        by_kind: dict[str, list[str]] = {}
        for key in node.children:
            by_kind.setdefault(segment_kind(key), []).append(key)
        for kind in sorted(_ALWAYS_PARAMETER & by_kind.keys()):
            _collapse(node, kind, by_kind[kind])
        langs = by_kind.get(LANG, [])
        if len(langs) >= MIN_LANGUAGE_SIBLINGS:
            _collapse(node, LANG, langs)
        else:
            by_kind.setdefault(SLUG, []).extend(langs)
        free = by_kind.get(SLUG, [])
        threshold = MIN_TOP_LEVEL_SIBLINGS if top_level else MIN_SIBLINGS
        sections = {key for key in free if _is_section(node.children[key])} if free else set()
        members = [key for key in free if key not in sections]
        if len(free) >= threshold and len(sections) >= threshold:
            _collapse(node, SLUG, free)
        elif len(members) >= threshold:
            _collapse(node, SLUG, members, keep_subtrees=top_level)
        elif not top_level and (alike := _alike_pages(node, members)):
            _collapse(node, SLUG, alike)
        for child in node.children.values():
            stack.append((child, False))
        for kind, child in node.params.items():
            # The children of a root-level language or free-text parameter are still top-level pages
            # (`/en/about`; `/about/team` beside `/press/kit`): only many of them make one template.
            stack.append((child, top_level and node is root and kind in (LANG, SLUG)))


@frozen
class TemplateNode:
    """One position of the inferred tree: literal children, and parameters by kind with their names."""

    literals: Mapping[str, "TemplateNode"]
    params: Mapping[str, tuple[str, "TemplateNode"]]
    terminal: bool = False  # a page's path ends here (else a path ending here takes a parameter)


def _most(values: Iterable[str], test: Callable[[str], bool]) -> bool:
    """Whether more than half of the values pass `test`: a name that one odd sibling cannot flip."""
    passed = failed = 0
    for value in values:
        if test(value):
            passed += 1
        else:
            failed += 1
    return passed > failed


def _is_year(value: str) -> bool:
    return len(value) == 4 and 1900 <= int(value) <= 2099


def _is_month(value: str) -> bool:
    return len(value) <= 2 and 1 <= int(value) <= 12


def _is_padded_month(value: str) -> bool:
    return len(value) == 2 and 1 <= int(value) <= 12


def _is_day(value: str) -> bool:
    return len(value) <= 2 and 1 <= int(value) <= 31


def _is_calendar_year(node: _Node) -> bool:
    """Whether a numeric parameter reads as years: most values are years, and either there are many of
    them or zero-padded months follow (`/2024/05/...`). One value alone never decides it, so
    `/products/1900` is an `[id]` before and after `/products/1` arrives."""
    if not _most(node.values, _is_year):
        return False
    if len(node.values) >= MIN_SIBLINGS:
        return True
    months = node.params.get(NUMERIC)
    return months is not None and _most(months.values, _is_padded_month)


def _param_name(kind: str, node: _Node, parent_literal: str | None, parent_name: str | None) -> str:
    """A parameter's name. Numeric ones are named by the shape of their values and of what follows, so
    that neither a few pages added to a large section (`/archive/[year]` stays so when `/archive/1`
    appears among a hundred years) nor the first siblings of a lone value rename its template."""
    if kind != NUMERIC:
        return {UUID: "uuid", DATE: "date", HASH: "hash", LANG: "lang"}.get(kind, "slug")
    if parent_literal is not None and parent_literal.lower() in _PAGINATION_WORDS:
        return "page"
    if parent_name == "year" and _most(node.values, _is_month):
        return "month"
    if parent_name == "month" and _most(node.values, _is_day):
        return "day"
    if _is_calendar_year(node):
        return "year"
    return "id"


def _freeze(root: _Node) -> TemplateNode:
    # Built bottom-up without recursion: deep paths must not hit the interpreter's recursion limit.
    order: list[tuple[_Node, str | None, str | None]] = []
    stack: list[tuple[_Node, str | None, str | None]] = [(root, None, None)]
    names: dict[int, dict[str, str]] = {}
    while stack:
        node, parent_literal, parent_name = stack.pop()
        order.append((node, parent_literal, parent_name))
        node_names = {
            kind: _param_name(kind, child, parent_literal, parent_name) for kind, child in node.params.items()
        }
        names[id(node)] = node_names
        for key, child in node.children.items():
            stack.append((child, key, None))
        for kind, child in node.params.items():
            stack.append((child, None, node_names[kind]))
    frozen_nodes: dict[int, TemplateNode] = {}
    for node, _, _ in reversed(order):
        frozen_nodes[id(node)] = TemplateNode(
            literals={key: frozen_nodes[id(child)] for key, child in sorted(node.children.items())},
            params={
                kind: (names[id(node)][kind], frozen_nodes[id(child)])
                for kind, child in sorted(node.params.items())
            },
            terminal=node.terminal,
        )
    return frozen_nodes[id(root)]


# Parameters of these kinds are words, not data: when every page of a template has the same word there,
# the word is what the template says (`/static/img/[slug]`, not `/[slug]/img/[slug2]`).
_WORD_KINDS: Final = frozenset({SLUG, LANG})


def _route(
    root: TemplateNode, segments: tuple[str, ...]
) -> Iterator[tuple[str, str | None, TemplateNode | None]]:
    """Each segment of a path with the parameter name it takes (None: literal) and the node reached.

    A literal child is taken first, unless the path ends there and the page itself was made a parameter
    (a one-off top-level page with pages below it); else the parameter of the segment's kind, else
    `[slug]` if the position has one, else the segment stays literal for the rest of the path."""
    node: TemplateNode | None = root
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if node is None:
            yield segment, None, None
            continue
        literal = node.literals.get(segment)
        param = node.params.get(segment_kind(segment)) or node.params.get(SLUG)
        if literal is not None and (literal.terminal or index < last or param is None):
            node = literal
            yield segment, None, node
            continue
        if param is None:
            node = None
            yield segment, None, None
            continue
        name, node = param
        yield segment, name, node


@frozen
class TemplateMap:
    """The inferred templates of one audit; `template_of` maps any URL of the site to its template."""

    root: TemplateNode
    # By the id of a node where pages end: the word each word parameter on the way has in every one of
    # those pages (None where they differ). Kept by id: the nodes live as long as `root`.
    shared: Mapping[int, tuple[str | None, ...]] = MappingProxyType({})

    def template_of(self, url: str) -> str:
        """The template key of a URL, e.g. `/blog/[slug]`; `/` for the root path."""
        return self.template_of_segments(path_segments(url))

    def template_of_segments(self, segments: Iterable[str]) -> str:
        route = list(_route(self.root, tuple(segments)))
        end = route[-1][2] if route else None
        shared = self.shared.get(id(end), ()) if end is not None else ()
        parts: list[str] = []
        used: dict[str, int] = {}
        word = 0
        for segment, name, _ in route:
            if name is None:
                parts.append(segment)
                continue
            if name in ("slug", "lang"):
                same = shared[word] if word < len(shared) else None
                word += 1
                if same == segment:
                    parts.append(segment)
                    continue
            used[name] = used.get(name, 0) + 1
            parts.append(f"[{name}]" if used[name] == 1 else f"[{name}{used[name]}]")
        return "/" + "/".join(parts)


def _shared_words(root: TemplateNode, paths: Iterable[tuple[str, ...]]) -> dict[int, tuple[str | None, ...]]:
    shared: dict[int, tuple[str | None, ...]] = {}
    for segments in paths:
        route = list(_route(root, segments))
        end = route[-1][2] if route else None
        if end is None:
            continue
        words = tuple(segment for segment, name, _ in route if name in ("slug", "lang"))
        known = shared.get(id(end))
        shared[id(end)] = (
            words
            if known is None
            else tuple(a if a == b else None for a, b in zip(known, words, strict=True))
        )
    return shared


def infer_templates(urls: Iterable[str]) -> TemplateMap:
    """Infer the URL templates of a set of crawled URLs (see the module documentation), from their paths
    alone."""
    return infer_page_templates((url, "") for url in urls)


def infer_page_templates(pages: Iterable[tuple[str, str]]) -> TemplateMap:
    """Infer the URL templates of pages given as (URL, skeleton): a skeleton (a fingerprint of the HTML's
    structure, "" unknown) lets a few sibling pages of one layout form a template."""
    builder = _Builder()
    for url, skeleton in pages:
        builder.add(url, skeleton)
    return builder.build()


class _Builder:
    """The path tree of a set of pages, added one at a time."""

    def __init__(self) -> None:
        self.root = _Node()
        self.seen: dict[tuple[str, ...], _Node] = {}

    def add(self, url: str, skeleton: str = "") -> None:
        segments = path_segments(url)
        node = self.seen.get(segments)
        if node is None:
            node = self.root
            for segment in segments:
                child = node.children.get(segment)
                if child is None:
                    child = node.children[segment] = _Node()
                node = child
            node.terminal = True
            self.seen[segments] = node
        if skeleton and (not node.skeleton or skeleton < node.skeleton):
            node.skeleton = skeleton

    def build(self) -> TemplateMap:
        _simplify(self.root)
        frozen_root = _freeze(self.root)
        return TemplateMap(root=frozen_root, shared=MappingProxyType(_shared_words(frozen_root, self.seen)))


class UrlRole(enum.Enum):
    """What a crawled URL is to the templates (docs/templates.md)."""

    PAGE = "page"  # an HTML page that answered 2xx itself: it shapes the page templates
    RESOURCE = "resource"  # any other content that answered 2xx (an image, a PDF): the resource templates
    OTHER = "other"  # an error, a redirect, a challenge, no answer: shapes nothing, takes a page template


def url_role(status: int | None, *, is_html: bool, redirected: bool, failed: bool, blocked: bool) -> UrlRole:
    if failed or blocked or redirected or status is None or not 200 <= status < 300:
        return UrlRole.OTHER
    return UrlRole.PAGE if is_html else UrlRole.RESOURCE


@frozen
class SiteTemplates:
    """The templates of one audit: those of its HTML pages, and apart those of its other content."""

    pages: TemplateMap
    resources: TemplateMap

    def template_of(self, url: str, role: UrlRole) -> str:
        return (self.resources if role is UrlRole.RESOURCE else self.pages).template_of(url)


def infer_site_templates(urls: Iterable[tuple[str, UrlRole, str]]) -> SiteTemplates:
    """The templates of an audit's URLs given as (URL, role, skeleton): only pages shape the page
    templates and only resources the resource templates; the other URLs (errors, redirects) shape none,
    so that a broken link or a redirect added or removed never renames a page's template."""
    pages, resources = _Builder(), _Builder()
    for url, role, skeleton in urls:
        if role is UrlRole.PAGE:
            pages.add(url, skeleton)
        elif role is UrlRole.RESOURCE:
            resources.add(url)
    return SiteTemplates(pages=pages.build(), resources=resources.build())
