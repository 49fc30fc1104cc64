# Over 500 lines: one pass over one parsed tree reading every fact the checks need; splitting it would walk the tree more than once.
"""Decode and parse an HTML page once, and read every fact the checks need from that one tree."""

import codecs
import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any, Final

import numpy as np
from attrs import evolve
from selectolax.lexbor import LexborHTMLParser, LexborNode
from w3lib.encoding import (
    html_body_declared_encoding,
    html_to_unicode,
    http_content_type_encoding,
    read_bom,
)

from siteaudit.adapters.html.rules import CompiledRules, extract_values
from siteaudit.adapters.url import (
    DEFAULT_POLICY,
    ParameterPolicy,
    ReferenceResolver,
    host_of,
    normalise,
)
from siteaudit.domain.extraction import Extracted
from siteaudit.domain.facts import (
    Hop,
    Hreflang,
    HtmlFacts,
    Image,
    JsonLdBlock,
    Link,
    LinkKind,
    PageFacts,
)
from siteaudit.domain.firewall import BODY_PREFIX_BYTES, detect_blocker
from siteaudit.domain.judgement import (
    ANCHOR_PUNCTUATION,
    GENERIC_ANCHORS,
    SHINGLE_WORDS,
    SKETCH_BINS,
    has_not_found_phrase,
)

HTML_MEDIA_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})

# Anchor texts longer than this cannot be generic, even once their whitespace is collapsed.
_LONGEST_GENERIC_TEXT: Final = 2 * max(len(text) for text in GENERIC_ANCHORS) + 8
_DOCTYPE_TAG: Final = "-doctype"
_NON_VISIBLE_TAGS: Final = ["script", "style", "noscript", "template", "title"]
_NON_VISIBLE: Final = frozenset(_NON_VISIBLE_TAGS)
_HEADINGS: Final = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Link relations that are not fetched documents but connection hints.
_HINT_RELS: Final = frozenset({"dns-prefetch", "preconnect"})
# `link` relations a browser fetches as part of rendering the page (so an http:// one is mixed content).
_SUBRESOURCE_RELS: Final = frozenset(
    {
        "stylesheet",
        "icon",
        "shortcut",
        "apple-touch-icon",
        "apple-touch-icon-precomposed",
        "mask-icon",
        "preload",
        "modulepreload",
        "manifest",
    }
)
# Relations allowed in <body> by the HTML standard: such a <link> is not a head element out of place.
_BODY_OK_RELS: Final = frozenset(
    {"dns-prefetch", "modulepreload", "pingback", "preconnect", "prefetch", "preload", "stylesheet"}
)
_HEAD_TAGS: Final = ("title", "meta", "link", "base", "script")
_BODY_TAGS: Final = (
    *("a", "img", "script", "link", "meta", "title", "base", "form", "iframe", "source", "video", "audio"),
    *("embed", "object", "input", "h1", "h2", "h3", "h4", "h5", "h6"),
    *("style", "noscript", "template"),  # not read, but removed before reading the visible text
)


def _tag_id(name: str) -> int:
    """Lexbor's id of a standard tag name: the same in every document, and in the SVG and MathML
    namespaces too (which is what a CSS type selector matches)."""
    node = LexborHTMLParser(f"<body><{name}></{name}>").css_first(name)
    assert node is not None
    return int(node.tag_id)


# Ids below the first tag's ("a") are text, comments, doctypes and the like: no elements among them.
_FIRST_TAG_ID: Final = _tag_id("a")
# Those ids map to "" in the walk's tables: one look-up per node tells a wanted element (its tag), an
# unwanted one (None) and a node that may not be an element at all ("").
_NOT_ELEMENT_IDS: Final = dict.fromkeys(range(_FIRST_TAG_ID), "")
_HEAD_IDS: Final = {**_NOT_ELEMENT_IDS, **{_tag_id(name): name for name in _HEAD_TAGS}}
_BODY_IDS: Final = {**_NOT_ELEMENT_IDS, **{_tag_id(name): name for name in _BODY_TAGS}}


def _elements(top: LexborNode, wanted: dict[int, str]) -> tuple[list[tuple[str, LexborNode]], int]:
    """(tag, node) of the elements under `top` with a wanted tag, in document order, and the number of
    elements under and including `top`.

    One walk in Lexbor's order, dispatching on integer tag ids, replaces a CSS pass over the same
    elements plus a `css("*")` pass to count them (the selector list is matched against every node).
    The walk yields elements and the odd comment: every node is counted, and the non-elements taken off.
    """
    found: list[tuple[str, LexborNode]] = []
    append = found.append
    get = wanted.get
    others = 0
    walked = 0
    for walked, node in enumerate(top.traverse(), 1):  # noqa: B007 - `walked` is read after the loop
        tag = get(node.tag_id)
        if tag is not None:
            if tag:
                append((tag, node))
            elif not node.is_element_node:
                others += 1
    return found, walked - others


# The skeleton of a page (docs/templates.md): the distinct tag paths of its block elements down to
# SKELETON_DEPTH levels below <body>. Text-level and non-visible elements are left out, and so are
# attributes, so pages cut from one layout share it whatever their text, and a list of three reviews or
# of thirty gives the same paths.
SKELETON_DEPTH: Final = 4
_NOT_SKELETON: Final = frozenset(
    {
        *("a", "abbr", "b", "bdi", "bdo", "br", "cite", "code", "data", "dfn", "em", "i", "kbd", "mark"),
        *("q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u"),
        *("var", "wbr", "img", "picture", "source", "svg", "path", "use", "input", "label", "option"),
        *("select", "textarea", "button", "script", "style", "noscript", "template", "title", "meta"),
        *("link", "base", "iframe", "video", "audio", "track", "embed", "object", "canvas", "del", "ins"),
    }
)


def skeleton_of(body: LexborNode | None) -> str:
    """The page's layout fingerprint: 16 hexadecimal characters, "" for a page without block elements."""
    if body is None:
        return ""
    paths: set[str] = set()
    stack: list[tuple[LexborNode, str, int]] = [(body, "", 1)]
    while stack:
        node, path, depth = stack.pop()
        for child in node.iter():
            tag = child.tag
            if not child.is_element_node or tag is None or tag in _NOT_SKELETON:
                continue
            below = f"{path}/{tag}"
            paths.add(below)
            if depth < SKELETON_DEPTH:
                stack.append((child, below, depth + 1))
    if not paths:
        return ""
    return hashlib.blake2b("\n".join(sorted(paths)).encode(), digest_size=8).hexdigest()


_SRC_SUBRESOURCES: Final = frozenset({"iframe", "source", "video", "audio", "embed", "input"})
_CHARSET_IN_CONTENT: Final = re.compile(r"charset\s*=\s*[\"']?([^\s;\"']+)", re.IGNORECASE)

# Near-duplicate sketch: one-permutation MinHash (Li, Owen and Zhang 2012) with rotation densification
# (Shrivastava and Li 2014). Every shingle is hashed once and falls into one of SKETCH_BINS bins; a bin
# keeps its smallest hash. Two pages agree on a bin with probability close to the Jaccard similarity of
# their shingle sets, as with classic MinHash, but in O(shingles) instead of O(shingles x permutations).
# The parameters are the domain's (fixed, so that sketches from different processes and audits are
# comparable); the values fit datasketch's MinHash(hashvalues=...) and MinHashLSH.
_BIN_BITS: Final = SKETCH_BINS.bit_length() - 1
_BIN_SHIFT: Final = np.uint64(64 - _BIN_BITS)  # log2(SKETCH_BINS) top bits choose the bin
_VALUE_SHIFT: Final = np.uint64(64 - _BIN_BITS - 32)  # the 32 bits below them are the bin's value
_LOW32: Final = np.uint64(0xFFFFFFFF)
_HASH_MAX: Final = np.uint64(2**64 - 1)
_ROTATION_OFFSET: Final = 1 << 32  # a borrowed value is moved out of the range of a bin's own values
_POLY: Final = 0x100000001B3
_POLY_BASE: Final = np.uint64(_POLY)
_POLY_INVERSE: Final = np.uint64(pow(_POLY, -1, 2**64))
_BIN_INDEX: Final = np.arange(SKETCH_BINS)


class _Powers:
    """Powers of the polynomial base and of its inverse modulo 2**64, grown on demand and shared."""

    def __init__(self) -> None:
        self.forward = np.ones(1, dtype=np.uint64)
        self.inverse = np.ones(1, dtype=np.uint64)

    def upto(self, size: int) -> tuple[Any, Any]:
        forward, inverse = self.forward, self.inverse
        if len(forward) <= size:
            length = max(size + 1, 2 * len(forward), 65536)
            forward = np.ones(length, dtype=np.uint64)
            inverse = np.ones(length, dtype=np.uint64)
            forward[1:] = np.cumprod(np.full(length - 1, _POLY_BASE, dtype=np.uint64))
            inverse[1:] = np.cumprod(np.full(length - 1, _POLY_INVERSE, dtype=np.uint64))
            self.forward, self.inverse = forward, inverse
        return forward, inverse


_POWERS = _Powers()


def sketch_of(text: str) -> tuple[int, ...]:
    """MinHash sketch of `text` (words separated by single spaces) over shingles of SHINGLE_WORDS words.

    Shingles are hashed as byte substrings with a polynomial prefix hash, so no Python code runs per
    word. A text of fewer than SHINGLE_WORDS words is one shingle. Empty text has an empty sketch.
    """
    return _sketch_of_utf8(text.encode())


def _sketch_of_utf8(encoded: bytes) -> tuple[int, ...]:
    """`sketch_of` the text whose UTF-8 encoding is `encoded`."""
    data = np.frombuffer(encoded, dtype=np.uint8)
    size = len(data)
    if size == 0:
        return ()
    spaces = np.flatnonzero(data == 32)
    starts = np.empty(len(spaces) + 1, dtype=np.int64)
    starts[0], starts[1:] = 0, spaces + 1
    ends = np.empty(len(spaces) + 1, dtype=np.int64)
    ends[:-1], ends[-1] = spaces, size
    span = min(SHINGLE_WORDS, len(starts))
    count = len(starts) - span + 1
    forward, inverse = _POWERS.upto(size)
    terms = data.astype(np.uint64)  # in place from here: one allocation per step instead of several
    terms += np.uint64(1)
    terms *= forward[:size]
    prefix = np.empty(size + 1, dtype=np.uint64)
    prefix[0] = 0
    np.cumsum(terms, out=prefix[1:])
    first = starts[:count]
    hashes = prefix[ends[span - 1 :]]
    hashes -= prefix[first]
    hashes *= inverse[first]
    # splitmix64 finaliser: the polynomial hash's bits are not uniform enough to pick bins with.
    hashes ^= hashes >> np.uint64(30)
    hashes *= np.uint64(0xBF58476D1CE4E5B9)
    hashes ^= hashes >> np.uint64(27)
    hashes *= np.uint64(0x94D049BB133111EB)
    hashes ^= hashes >> np.uint64(31)
    # Each bin's smallest hash, by an unbuffered minimum per bin (no sort of all the hashes).
    bins = (hashes >> _BIN_SHIFT).astype(np.intp)
    lowest = np.full(SKETCH_BINS, _HASH_MAX, dtype=np.uint64)
    np.minimum.at(lowest, bins, hashes)
    present = np.zeros(SKETCH_BINS, dtype=bool)
    present[bins] = True
    filled = np.flatnonzero(present)
    values = ((lowest >> _VALUE_SHIFT) & _LOW32).astype(np.int64)
    # An empty bin borrows the value of the next filled one (circularly), moved out of the own range.
    donors = filled[np.searchsorted(filled, _BIN_INDEX) % len(filled)]
    sketch = values[donors] + ((donors - _BIN_INDEX) % SKETCH_BINS) * _ROTATION_OFFSET
    return tuple(sketch.tolist())


def parse_content_type(header: str | None) -> tuple[str | None, str | None]:
    """(media type lower-cased, charset lower-cased) of a Content-Type header value."""
    if not header:
        return None, None
    media, _, params = header.partition(";")
    match = _CHARSET_IN_CONTENT.search(params)
    return media.strip().lower() or None, (match.group(1).lower() if match else None)


_ASCII: Final = bytes(range(128))


def _lowered(text: str) -> tuple[str, bytes]:
    """`text.lower()` and its UTF-8 bytes. Lower-casing the bytes (ASCII letters only) is several times
    faster than `str.lower` on text with any non-ASCII character, and gives the same when none of those
    characters changes case: a character's lower case does not depend on its neighbours, the capital
    sigma aside (which changes whatever its neighbours), and no UTF-8 sequence holds an ASCII byte."""
    encoded = text.encode()
    if not text.isascii():
        others = encoded.translate(None, _ASCII).decode()  # the non-ASCII characters, in order
        if others.lower() != others:
            lowered = text.lower()
            return lowered, lowered.encode()
    encoded = encoded.lower()
    return encoded.decode(), encoded


def _collapse(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


def _rel_tokens(value: str | None) -> set[str]:
    return set(value.lower().split()) if value else set()


def _json_ld(text: str) -> JsonLdBlock:
    try:
        data: Any = json.loads(text)
    except ValueError:
        return JsonLdBlock(valid_json=False)
    items = data if isinstance(data, list) else [data]
    objects = [item for item in items if isinstance(item, dict)]
    has_context = bool(objects) and len(objects) == len(items) and all("@context" in o for o in objects)
    types: list[str] = []
    nodes = list(objects)
    for obj in objects:
        graph = obj.get("@graph")
        if isinstance(graph, list):
            nodes.extend(node for node in graph if isinstance(node, dict))
    for node in nodes:
        declared = node.get("@type")
        if isinstance(declared, str):
            types.append(declared)
        elif isinstance(declared, list):
            types.extend(t for t in declared if isinstance(t, str))
    return JsonLdBlock(
        valid_json=True, has_context=has_context, has_type=bool(types), types=tuple(dict.fromkeys(types))
    )


def _has_doctype(tree: LexborHTMLParser) -> bool:
    node = tree.root
    while node is not None:
        if node.tag == _DOCTYPE_TAG:
            html = node.html or ""
            return html[:14].lower() == "<!doctype html"
        node = node.prev
    return False


def _usual_shape(root: LexborNode, head: LexborNode | None, body: LexborNode | None) -> bool:
    """Whether the root's element children are just the head and the body, as the parser builds most
    documents (a frameset replaces the body, leaving `tree.body` detached from the document)."""
    if head is None or body is None:
        return False
    children = [node for node in root.iter() if node.is_element_node]
    return len(children) == 2 and children[0].mem_id == head.mem_id and children[1].mem_id == body.mem_id


def _srcset_urls(value: str) -> list[str]:
    return [candidate.split()[0] for candidate in value.split(",") if candidate.strip()]


# What `_Page.anchors` makes of an anchor's text, kept by text: the collapsed text when it is generic,
# _NOT_GENERIC, or _EMPTY_TEXT (the text collapses to nothing: the anchor's attributes and images
# decide). Anchor texts repeat across the pages of a site; the table starts over when full.
_NOT_GENERIC: Final = "\x00not generic"
_EMPTY_TEXT: Final = "\x00empty"
_GENERIC_READINGS: Final[dict[str, str]] = {}
_GENERIC_READINGS_MAX: Final = 16384
_KEPT_TEXT: Final = 64  # longer texts (mostly whitespace, since they can be generic) are not kept
# Link facts by page origin's host, then by (target, kind, nofollow): most links recur on every page of
# a site, and a Link is immutable. Started over when full.
_LINK_FACTS: Final[dict[str, dict[tuple[str, LinkKind, bool], Link]]] = {}
_LINK_FACTS_MAX: Final = 4096  # per host; at most _LINK_FACTS_HOSTS hosts (a few MB in all)
_LINK_FACTS_HOSTS: Final = 8
_UNREAD: Final = "\x00unread"
_UNCRAWLABLE: Final = "\x00uncrawlable"


# Attributes that make an <a> without href act as a link: a script handler (any `on...` attribute too)
# or a client-side router's target. Attribute names come lower-cased from the parser.
_LINK_ACTING_ATTRIBUTES: Final = frozenset(
    {"routerlink", "ng-href", "ng-click", "to", "data-href", "@click", "v-on:click", "x-on:click"}
)


def _acts_as_link(attrs: dict[str, str | None]) -> bool:
    """Whether an <a> without href acts as a link: a script handler, a router attribute or `role="link"`."""
    for name in attrs:
        if name[:2] == "on" or name in _LINK_ACTING_ATTRIBUTES:
            return True
    role = attrs.get("role")
    return role is not None and "link" in role.lower().split()


def _generic_reading(text: str) -> str:
    if len(text) > _LONGEST_GENERIC_TEXT and len(text.strip()) > _LONGEST_GENERIC_TEXT:
        return _NOT_GENERIC  # too long to be generic even once whitespace is collapsed
    collapsed = " ".join(text.split())
    if not collapsed:
        return _EMPTY_TEXT
    if collapsed.lower().strip(ANCHOR_PUNCTUATION) in GENERIC_ANCHORS:
        return collapsed
    return _NOT_GENERIC


class _Page:
    """Accumulates the facts during one pass over the head's and the body's elements."""

    def __init__(self, url: str, origin: str, policy: ParameterPolicy) -> None:
        self.url = url
        self.base = url
        self.origin_host = host_of(origin) or host_of(url) or ""
        self.policy = policy
        self.https = url[:6].lower() == "https:"
        self.base_is_http = url[:5].lower() == "http:"
        self.titles: list[str] = []
        self.titles_in_body = 0
        self.descriptions: list[str] = []
        self.robots: list[str] = []
        self.canonicals: list[str] = []
        self.base_href: str | None = None
        self.h1s: list[str] = []
        self.levels: list[int] = []
        self.viewport: str | None = None
        self.charset: str | None = None
        self.refresh: str | None = None
        self.open_graph: set[str] = set()
        self.json_ld: list[JsonLdBlock] = []
        self.links: dict[tuple[str, LinkKind, bool], None] = {}
        self.anchor_links = 0  # every <a href> link, repeats included (`links` keeps each once)
        self.generic: list[str] = []
        self.uncrawlable: list[str] = []
        self.images: list[Image] = []
        self.hreflangs: list[Hreflang] = []
        self.mixed: dict[str, None] = {}
        self.insecure_forms: list[str] = []
        self.metas_in_body = 0
        self.resolver = ReferenceResolver(url, policy)

    def resolve(self, raw: str) -> str | None:
        return self.resolver(raw)

    def add_link(self, target: str, kind: LinkKind, *, nofollow: bool = False) -> None:
        self.links[(target, kind, nofollow)] = None

    def link_facts(self) -> tuple[Link, ...]:
        """Links are kept as keys while reading (most pages repeat targets) and built once at the end,
        or taken from `_LINK_FACTS`."""
        origin_host = self.origin_host
        known = _LINK_FACTS.get(origin_host)
        if known is None or len(known) > _LINK_FACTS_MAX:
            if len(_LINK_FACTS) >= _LINK_FACTS_HOSTS:
                _LINK_FACTS.clear()
            known = _LINK_FACTS[origin_host] = {}
        # A target starting with `scheme://` + the origin's host + "/" has that host (`host_of` cannot
        # read anything else there: the host holds no userinfo, port or upper case), so most internal
        # links skip the parse.
        own = (f"https://{origin_host}/", f"http://{origin_host}/") if origin_host.isascii() else ()
        facts: list[Link] = []
        append = facts.append
        get = known.get
        for key in self.links:
            link = get(key)
            if link is None:
                target, kind, nofollow = key
                link = known[key] = Link(
                    target=target,
                    kind=kind,
                    internal=target.startswith(own) or host_of(target) == origin_host,
                    nofollow=nofollow,
                )
            append(link)
        return tuple(facts)

    def subresource(self, raw: str | None, resolved: str | None = None) -> None:
        """Record an http:// subresource of an https page (relative ones are http only under an http base)."""
        if not self.https or not raw:
            return
        if resolved is None:
            if not (self.base_is_http or raw.lstrip()[:5].lower() == "http:"):
                return
            resolved = self.resolve(raw)
        if resolved is not None and resolved.startswith("http:"):
            self.mixed[resolved] = None

    def set_base(self, node: LexborNode) -> None:
        href = node.attributes.get("href")
        if href is None or self.base_href is not None:
            return
        self.base_href = href
        resolved = normalise(href, self.url, policy=ParameterPolicy.keep_all())
        if resolved is not None:
            self.base = resolved
            self.resolver = ReferenceResolver(resolved, self.policy)
            self.base_is_http = resolved.startswith("http:")

    def meta(self, node: LexborNode, *, in_head: bool) -> None:
        attrs = node.attributes
        name = (attrs.get("name") or "").strip().lower()
        content = attrs.get("content")
        if not in_head and "itemprop" not in attrs:
            self.metas_in_body += 1
        if name:
            if name == "description":
                if in_head:
                    self.descriptions.append(_collapse(content))
            elif name in ("robots", "googlebot"):
                self.robots.append((content or "").strip().lower())
            elif name == "viewport":
                if self.viewport is None:
                    self.viewport = content or ""
            elif name.startswith("og:") and content and content.strip():
                self.open_graph.add(name)
        prop = attrs.get("property")
        if prop and prop[:3].lower() == "og:" and content and content.strip():
            self.open_graph.add(prop.strip().lower())
        charset = attrs.get("charset")
        if charset is not None and self.charset is None:
            self.charset = charset.strip().lower()
        equiv = (attrs.get("http-equiv") or "").strip().lower()
        if equiv == "refresh":
            if self.refresh is None:
                self.refresh = content or ""
        elif equiv == "content-type" and self.charset is None and content:
            match = _CHARSET_IN_CONTENT.search(content)
            if match:
                self.charset = match.group(1).lower()

    def link_element(self, node: LexborNode, *, in_head: bool) -> None:
        attrs = node.attributes
        rels = _rel_tokens(attrs.get("rel"))
        href = attrs.get("href")
        if not in_head and "itemprop" not in attrs and not rels & _BODY_OK_RELS:
            self.metas_in_body += 1
        if href is None:
            return
        target = self.resolve(href)
        if "canonical" in rels:
            if in_head:
                self.canonicals.append(href)
                if target is not None:
                    self.add_link(target, LinkKind.CANONICAL)
            return
        lang = attrs.get("hreflang")
        if "alternate" in rels and lang is not None:
            if in_head:
                self.hreflangs.append(Hreflang(lang=lang, href=href, target=target, source="html"))
                if target is not None:
                    self.add_link(target, LinkKind.HREFLANG)
            return
        if target is None or (rels <= _HINT_RELS and rels):
            return
        self.add_link(target, LinkKind.LINK)
        if rels & _SUBRESOURCE_RELS:
            self.subresource(href, target)

    def script(self, node: LexborNode) -> None:
        attrs = node.attributes
        src = attrs.get("src")
        if src is not None:
            target = self.resolve(src)
            if target is not None:
                self.add_link(target, LinkKind.SCRIPT)
                self.subresource(src, target)
            return
        kind = attrs.get("type")
        if kind and kind.split(";", 1)[0].strip().lower() == "application/ld+json":
            self.json_ld.append(_json_ld(node.text()))

    def anchors(self, nodes: list[LexborNode]) -> None:
        # The hot loop of link-heavy pages: locals instead of attribute lookups and method calls. An
        # href seen before on the page (most pages repeat many) is read once; so is an anchor text
        # seen before on any page (navigation, "¶" marks) through `_generic_reading`.
        resolve, links, generic, uncrawlable = self.resolver, self.links, self.generic, self.uncrawlable
        kind = LinkKind.A
        count = 0
        read: dict[str, str | None] = {}  # href as written -> target, None (no link) or _UNCRAWLABLE
        readings = _GENERIC_READINGS
        if len(readings) > _GENERIC_READINGS_MAX:
            readings.clear()
        for node in nodes:
            attrs = node.attributes
            href = attrs.get("href")
            if href is None:
                # An <a> without href is a jump target (`id`, `name`) or a placeholder, not a link, unless
                # it acts as one: then it is a fake link (see `_acts_as_link`).
                if _acts_as_link(attrs):
                    uncrawlable.append("")
                continue
            target = read.get(href, _UNREAD)
            if target is _UNREAD:
                raw = href.strip()
                if not raw or raw[0] == "#":
                    target = _UNCRAWLABLE if raw == "#" else None
                elif (raw[0] == "j" or raw[0] == "J") and raw[:11].lower() == "javascript:":
                    target = _UNCRAWLABLE
                else:
                    target = resolve(raw)
                read[href] = target
            if target is None:
                continue
            if target is _UNCRAWLABLE:
                uncrawlable.append(href)
                continue
            rel = attrs.get("rel")
            links[(target, kind, rel is not None and "nofollow" in rel.lower().split())] = None
            count += 1
            text = node.text_lexbor()
            if len(text) > _LONGEST_GENERIC_TEXT and len(text.strip()) > _LONGEST_GENERIC_TEXT:
                continue  # too long to be generic even once whitespace is collapsed
            reading = readings.get(text)
            if reading is None:
                reading = _generic_reading(text)
                if len(text) <= _KEPT_TEXT:
                    readings[text] = reading
            if reading is _EMPTY_TEXT:
                text = _collapse(attrs.get("aria-label") or attrs.get("title"))
                if not text:
                    for image in node.css("img[alt]"):
                        text = _collapse(image.attributes.get("alt"))
                        if text:
                            break
                if not text or text.lower().strip(ANCHOR_PUNCTUATION) in GENERIC_ANCHORS:
                    generic.append(text)
            elif reading is not _NOT_GENERIC:
                generic.append(reading)
        self.anchor_links += count

    def image(self, node: LexborNode) -> None:
        attrs = node.attributes
        src = attrs.get("src") or attrs.get("data-src") or ""
        target = self.resolve(src) if src else None
        self.images.append(
            Image(
                src=target or src,
                has_alt="alt" in attrs,
                width=attrs.get("width"),
                height=attrs.get("height"),
            )
        )
        if target is not None:
            self.add_link(target, LinkKind.IMG)
            self.subresource(src, target)
        srcset = attrs.get("srcset")
        if srcset and self.https:
            for candidate in _srcset_urls(srcset):
                self.subresource(candidate)

    def form(self, node: LexborNode) -> None:
        action = (node.attributes.get("action") or "").strip()
        target = self.resolve(action) if action else normalise(self.url, policy=self.policy)
        if target is not None and target.startswith("http:"):
            self.insecure_forms.append(target)

    def media(self, node: LexborNode, tag: str) -> None:
        if not self.https:
            return
        attrs = node.attributes
        if tag == "input" and (attrs.get("type") or "").lower() != "image":
            return
        self.subresource(attrs.get("src"))
        if tag == "video":
            self.subresource(attrs.get("poster"))
        elif tag == "source":
            srcset = attrs.get("srcset")
            if srcset:
                for candidate in _srcset_urls(srcset):
                    self.subresource(candidate)
        elif tag == "object":
            self.subresource(attrs.get("data"))


def _reads_as_utf8(content_type_header: str | None, body: bytes) -> bool:
    """Whether `html_to_unicode` would read `body` as UTF-8 without a BOM and `body` is valid UTF-8:
    then the text it decodes encodes back to `body` itself, and the decoding can be skipped. The
    encoding is chosen as `html_to_unicode` chooses it (BOM, HTTP charset, `<meta>`, UTF-8)."""
    if read_bom(body)[0] is not None:
        return False
    encoding = http_content_type_encoding(content_type_header)
    if encoding is None:
        encoding = html_body_declared_encoding(body) or "utf8"
    if codecs.lookup(encoding).name != "utf-8":
        return False
    if body.isascii():
        return True
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _utf8_of(content_type_header: str | None, body: bytes) -> bytes:
    """The UTF-8 bytes of `body` decoded by HTTP charset, BOM or `<meta charset>` (w3lib)."""
    encoding, text = html_to_unicode(content_type_header, body)
    # A body that decoded as UTF-8 without a BOM or a replaced byte is those bytes.
    if (
        codecs.lookup(encoding).name == "utf-8"
        and not body.startswith(codecs.BOM_UTF8)
        and "\ufffd" not in text
    ):
        return body
    return text.encode("utf-8", "ignore")


def extract_html_facts(
    body: bytes,
    *,
    url: str,
    content_type_header: str | None,
    origin: str,
    policy: ParameterPolicy = DEFAULT_POLICY,
) -> HtmlFacts:
    return html_facts_and_values(
        body, url=url, content_type_header=content_type_header, origin=origin, policy=policy
    )[0]


def html_facts_and_values(
    body: bytes,
    *,
    url: str,
    content_type_header: str | None,
    origin: str,
    policy: ParameterPolicy = DEFAULT_POLICY,
    rules: CompiledRules | None = None,
) -> tuple[HtmlFacts, tuple[Extracted, ...]]:
    """Facts of one HTML page. `url` is the final response URL; `origin` the audited scheme://host[:port].

    The body is decoded by HTTP charset, BOM or `<meta charset>` (w3lib), parsed once by Lexbor, and read
    in one CSS pass over the head and one over the body; the visible text comes last because reading it
    strips the non-visible elements from the tree.
    """
    # The parser reads UTF-8 bytes (it would encode a text itself); those bytes also serve `source`.
    # Most bodies already are them.
    encoded = body if _reads_as_utf8(content_type_header, body) else _utf8_of(content_type_header, body)
    tree = LexborHTMLParser(encoded)
    # The extraction rules read the tree whole, before the facts remove its non-visible elements.
    values = extract_values(tree, encoded, rules) if rules is not None and rules.rules else ()
    return facts_from_tree(tree, url=url, origin=origin, policy=policy, source=encoded), values


def facts_from_tree(
    tree: LexborHTMLParser,
    *,
    url: str,
    origin: str,
    policy: ParameterPolicy = DEFAULT_POLICY,
    source: str | bytes = "",
) -> HtmlFacts:
    """Facts read from an already parsed document. Mutates the tree (removes the body's non-visible
    elements). `source`, the document as text or UTF-8 bytes, spares attribute selectors most pages."""
    page = _Page(url, origin, policy)
    root = tree.root
    head = tree.head
    body = tree.body
    head_nodes, head_count = _elements(head, _HEAD_IDS) if head is not None else ([], 0)
    body_nodes, body_count = _elements(body, _BODY_IDS) if body is not None else ([], 0)

    # <base href> governs every relative URL of the document, including those that come before it.
    for tag, node in head_nodes:
        if tag == "base":
            page.set_base(node)
            break
    else:
        for tag, node in body_nodes:
            if tag == "base":
                page.set_base(node)
                break

    for tag, node in head_nodes:
        if tag == "meta":
            page.meta(node, in_head=True)
        elif tag == "link":
            page.link_element(node, in_head=True)
        elif tag == "title":
            page.titles.append(_collapse(node.text_lexbor()))
        elif tag == "script":
            page.script(node)

    body_titles = 0
    anchors: list[LexborNode] = []
    for tag, node in body_nodes:
        if tag == "a":
            anchors.append(node)
        elif tag == "img":
            page.image(node)
        elif tag in _HEADINGS:
            level = int(tag[1])
            page.levels.append(level)
            if level == 1:
                page.h1s.append(_collapse(node.text_lexbor()))
        elif tag == "script":
            page.script(node)
        elif tag == "link":
            page.link_element(node, in_head=False)
        elif tag == "meta":
            page.meta(node, in_head=False)
        elif tag == "title":
            body_titles += 1
        elif tag == "form":
            page.form(node)
        elif tag in _SRC_SUBRESOURCES or tag == "object":
            page.media(node, tag)
    page.anchors(anchors)
    if body_titles and body is not None:
        # An inline SVG has its own <title> (a tooltip): it is not a misplaced document title.
        body_titles -= len(body.css("svg title"))
    page.titles_in_body = body_titles

    # A substring test on the source is far cheaper than an attribute selector over the whole tree,
    # and most pages have neither: the selector only confirms a hit. Lower-casing UTF-8 bytes (ASCII
    # letters only) is several times faster than `str.lower` on non-ASCII text and finds the same
    # ASCII words: no other character lower-cases into one of them.
    if isinstance(source, str):
        source = source.encode("utf-8", "surrogatepass")
    lowered_source = source.lower() if source else None
    has_microdata = has_rdfa = False
    usual = root is not None and _usual_shape(root, head, body)
    skeleton = skeleton_of(body)  # before the non-visible elements go (they are not part of it anyway)
    dom_nodes = 0
    lang: str | None = None
    if root is not None:
        if lowered_source is None or b"itemscope" in lowered_source:
            has_microdata = root.any_css_matches(("[itemscope]",))
        if lowered_source is None or b"typeof" in lowered_source or b"vocab" in lowered_source:
            has_rdfa = root.any_css_matches(("[typeof]",)) or root.any_css_matches(("[vocab]",))
        # The walks counted the elements under the head and the body: with the root, that is all of them.
        dom_nodes = 1 + head_count + body_count if usual else len(root.css("*"))
        lang = root.attrs.get("lang")
    has_doctype = _has_doctype(tree)

    if usual:
        # Only the body's text is read, so only its non-visible elements need removing: those the walk
        # found (a search per tag over the whole document finds the same ones), detached as strip_tags
        # does, last first so that an element inside another goes before its container.
        for tag, node in reversed(body_nodes):
            if tag in _NON_VISIBLE:
                node.decompose(recursive=False)
    else:
        tree.strip_tags(_NON_VISIBLE_TAGS)
    # Text nodes of ASCII whitespace only (indentation, most of them) add nothing once split.
    visible = body.text(separator=" ", skip_empty=True) if body is not None else ""
    words = visible.split()
    normalised = " ".join(words)
    lowered, encoded = _lowered(normalised)  # `encoded` once for the fingerprint and the sketch
    title = page.titles[0].lower() if page.titles else ""
    return HtmlFacts(
        titles=tuple(page.titles),
        titles_in_body=page.titles_in_body,
        meta_descriptions=tuple(page.descriptions),
        meta_robots=tuple(page.robots),
        canonicals=tuple(page.canonicals),
        base_href=page.base_href,
        h1s=tuple(page.h1s),
        heading_levels=tuple(page.levels),
        lang=lang.strip() if lang is not None else None,
        viewport=page.viewport,
        has_doctype=has_doctype,
        meta_charset=page.charset,
        meta_refresh=page.refresh,
        open_graph=frozenset(page.open_graph),
        json_ld=tuple(page.json_ld),
        has_microdata=bool(has_microdata),
        has_rdfa=bool(has_rdfa),
        links=page.link_facts(),
        anchor_links=page.anchor_links,
        anchors_generic=tuple(page.generic),
        uncrawlable_anchors=tuple(page.uncrawlable),
        images=tuple(page.images),
        hreflangs=tuple(page.hreflangs),
        mixed_content=tuple(page.mixed),
        insecure_forms=tuple(dict.fromkeys(page.insecure_forms)),
        metas_in_body=page.metas_in_body,
        word_count=len(words),
        text_chars=len(normalised),
        not_found_phrase=has_not_found_phrase(lowered) or has_not_found_phrase(title),
        fingerprint=hashlib.blake2b(encoded, digest_size=16).hexdigest() if words else "",
        sketch=_sketch_of_utf8(encoded),
        skeleton=skeleton,
        dom_nodes=dom_nodes,
    )


_LINK_TARGET: Final = re.compile(r"[\s,]*<([^>]*)>")
_LINK_PARAM: Final = re.compile(r'\s*;\s*([^\s=;,]+)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|([^;,]*)))?')


def parse_link_header(values: Iterable[str]) -> list[tuple[str, dict[str, str]]]:
    """(target as written, parameters with lower-cased names) of each link of RFC 8288 `Link` headers."""
    links: list[tuple[str, dict[str, str]]] = []
    for value in values:
        position = 0
        while match := _LINK_TARGET.match(value, position):
            target, position = match.group(1).strip(), match.end()
            params: dict[str, str] = {}
            while param := _LINK_PARAM.match(value, position):
                quoted, bare = param.group(2), param.group(3)
                params.setdefault(
                    param.group(1).lower(), quoted if quoted is not None else (bare or "").strip()
                )
                position = param.end()
            links.append((target, params))
    return links


def link_header_canonicals(
    values: Iterable[str], *, base: str, policy: ParameterPolicy = DEFAULT_POLICY
) -> tuple[str, ...]:
    found = []
    for target, params in parse_link_header(values):
        if "canonical" in _rel_tokens(params.get("rel")):
            resolved = normalise(target, base, policy=policy)
            if resolved is not None:
                found.append(resolved)
    return tuple(dict.fromkeys(found))


def link_header_hreflangs(
    values: Iterable[str], *, base: str, policy: ParameterPolicy = DEFAULT_POLICY
) -> tuple[Hreflang, ...]:
    found = []
    for target, params in parse_link_header(values):
        lang = params.get("hreflang")
        if lang is not None and "alternate" in _rel_tokens(params.get("rel")):
            resolved = normalise(target, base, policy=policy)
            found.append(Hreflang(lang=lang, href=target, target=resolved, source="header"))
    return tuple(found)


# Directives whose own syntax has a colon, so "max-snippet: 20" is not a user agent named max-snippet.
_COLON_DIRECTIVES: Final = frozenset(
    {"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"}
)
_AGENT_PREFIX: Final = re.compile(r"^([A-Za-z0-9_.\-]+)\s*:\s*(.*)$", re.DOTALL)


def x_robots_directives(
    values: Iterable[str], *, user_agents: Iterable[str] = ("googlebot",)
) -> tuple[str, ...]:
    """The X-Robots-Tag values that apply to us, lower-cased, user-agent prefixes removed.

    A value (or, within a value, the comma-separated tokens after) prefixed with `agent:` applies only
    to that agent; values for agents other than `user_agents` are dropped. Each result is shaped like a
    `<meta name=robots>` content, so the checks read both the same way.
    """
    wanted = {agent.lower() for agent in user_agents}
    applicable: list[str] = []
    for value in values:
        agent: str | None = None
        kept: list[str] = []
        for token in value.split(","):
            token = token.strip()
            prefixed = _AGENT_PREFIX.match(token)
            if prefixed and prefixed.group(1).lower() not in _COLON_DIRECTIVES:
                agent, token = prefixed.group(1).lower(), prefixed.group(2).strip()
            if token and (agent is None or agent in wanted):
                kept.append(token.lower())
        if kept:
            applicable.append(", ".join(kept))
    return tuple(applicable)


# Response headers kept with the page: those some check or report reads.
KEPT_HEADERS: Final = frozenset(
    {
        "content-type",
        "content-length",
        "content-encoding",
        "content-language",
        "location",
        "refresh",
        "retry-after",
        "cache-control",
        "expires",
        "vary",
        "server",
        "strict-transport-security",
        "content-security-policy",
        "x-frame-options",
        "x-content-type-options",
        "referrer-policy",
        "x-robots-tag",
        "link",
        "etag",
        "last-modified",
    }
)


def _sniffs_as_html(body: bytes) -> bool:
    start = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return start.startswith((b"<!doctype html", b"<html", b"<head", b"<!--"))


def extract_page_facts(
    *,
    url: str,
    status: int,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    origin: str,
    final_url: str | None = None,
    depth: int = 0,
    redirects: tuple[Hop, ...] = (),
    truncated: bool = False,
    ttfb_ms: int | None = None,
    total_ms: int | None = None,
    policy: ParameterPolicy = DEFAULT_POLICY,
    robots_agents: Iterable[str] = ("googlebot",),
    rules: CompiledRules | None = None,
) -> PageFacts:
    """PageFacts of one final response: header facts, firewall detection, and HtmlFacts for HTML bodies.

    HTML is read for any non-redirect status (a 404 page's title identifies the site's 404 template),
    but not for a challenged response. A missing Content-Type is sniffed from the body's first bytes.
    """
    pairs = [(name.lower(), value) for name, value in headers]
    content_type_header = next((v for n, v in pairs if n == "content-type"), None)
    media_type, charset = parse_content_type(content_type_header)
    page_url = final_url or url
    blocked_by = detect_blocker(status, pairs, body[:BODY_PREFIX_BYTES], body_size=len(body))
    is_html = media_type in HTML_MEDIA_TYPES or (media_type is None and _sniffs_as_html(body))
    link_values = [v for n, v in pairs if n == "link"]
    html = None
    extracted: tuple[Extracted, ...] = ()
    if is_html and blocked_by is None and not 300 <= status < 400 and body:
        html, extracted = html_facts_and_values(
            body,
            url=page_url,
            content_type_header=content_type_header,
            origin=origin,
            policy=policy,
            rules=rules,
        )
        header_hreflangs = link_header_hreflangs(link_values, base=page_url, policy=policy)
        if header_hreflangs:
            html = evolve(html, hreflangs=html.hreflangs + header_hreflangs)
    return PageFacts(
        url=url,
        depth=depth,
        status_code=status,
        final_url=page_url,
        redirects=redirects,
        content_type=media_type,
        charset=charset,
        headers=tuple((n, v) for n, v in pairs if n in KEPT_HEADERS),
        x_robots_tag=x_robots_directives(
            (v for n, v in pairs if n == "x-robots-tag"), user_agents=robots_agents
        ),
        link_canonicals=link_header_canonicals(link_values, base=page_url, policy=policy),
        bytes=len(body),
        truncated=truncated,
        ttfb_ms=ttfb_ms,
        total_ms=total_ms,
        blocked_by=None if blocked_by is None else str(blocked_by),
        etag=next((v for n, v in pairs if n == "etag"), None),
        last_modified=next((v for n, v in pairs if n == "last-modified"), None),
        html=html,
        extracted=extracted,
    )
