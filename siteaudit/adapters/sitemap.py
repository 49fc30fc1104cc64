"""Sitemaps: streaming parse of XML (optionally gzipped) or plain-text sitemaps into facts and URLs."""

import gzip
import io
import zlib
from typing import BinaryIO, Final

from attrs import evolve
from lxml import etree  # type: ignore[import-untyped]

from siteaudit.adapters.url import ParameterPolicy, normalise
from siteaudit.domain.facts import Hreflang, SitemapFacts
from siteaudit.domain.judgement import SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS
from siteaudit.ports.parse import SitemapReading

_GZIP_MAGIC: Final = b"\x1f\x8b"
_READ_CHUNK: Final = 64 * 1024
_KEEP_ALL = ParameterPolicy.keep_all()


class _BoundedReader(io.RawIOBase):
    """Feeds the parser at most `limit` uncompressed bytes; remembers a broken gzip instead of raising.

    Errors raised inside a read would surface from lxml as a generic syntax error, so the reader ends
    the stream early and records why.
    """

    def __init__(self, source: BinaryIO, limit: int) -> None:
        super().__init__()
        self._source = source
        self._left = limit
        self.too_large = False
        self.bad_gzip = False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.too_large or self.bad_gzip:
            return b""
        wanted = _READ_CHUNK if size is None or size < 0 else size
        try:
            chunk = self._source.read(min(wanted, self._left + 1))
        except (OSError, EOFError, zlib.error):
            self.bad_gzip = True
            return b""
        if len(chunk) > self._left:
            self.too_large = True
            chunk = chunk[: self._left]
        self._left -= len(chunk)
        return chunk

    def readinto(self, buffer: "bytearray | memoryview") -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _local(tag: object) -> str:
    name = tag if isinstance(tag, str) else ""
    return name.rsplit("}", 1)[-1]


def _open(body: bytes | BinaryIO) -> tuple[BinaryIO, bool]:
    stream: BinaryIO = io.BytesIO(body) if isinstance(body, bytes | bytearray) else body
    head = stream.read(2)
    rest: BinaryIO = _Prefixed(head, stream)  # type: ignore[assignment]
    if head == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=rest, mode="rb"), True  # type: ignore[return-value]
    return rest, False


class _Prefixed(io.RawIOBase):
    """A stream with its first bytes (already read to sniff the format) put back in front."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        super().__init__()
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size is None or size < 0:
                data, self._head = self._head + self._rest.read(), b""
                return data
            data, self._head = self._head[:size], self._head[size:]
            return data + self._rest.read(size - len(data)) if len(data) < size else data
        return self._rest.read(size)

    def readinto(self, buffer: "bytearray | memoryview") -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _looks_like_text_sitemap(start: bytes) -> bool:
    stripped = start.lstrip(b"\xef\xbb\xbf \t\r\n")
    return stripped[:7].lower() == b"http://" or stripped[:8].lower() == b"https://"


def parse_sitemap(
    body: bytes | BinaryIO,
    *,
    url: str,
    found_via: str = "robots",
    status_code: int | None = 200,
    max_urls: int = SITEMAP_MAX_URLS,
    max_bytes: int = SITEMAP_MAX_BYTES,
) -> SitemapReading:
    """Parse one sitemap document without network access and without expanding entities.

    Problems: `not_xml`, `wrong_root` (neither urlset nor sitemapindex), `too_many_urls` (more than
    `max_urls` entries: only the first `max_urls` are returned, all are counted), `too_large` (more than
    `max_bytes` uncompressed: parsing stops there), `bad_gzip`.
    """
    stream, _gzipped = _open(body)
    reader = _BoundedReader(stream, max_bytes)
    buffered = io.BufferedReader(reader, buffer_size=_READ_CHUNK)
    start = buffered.peek(64)[:64]
    found = SitemapFacts(url=url, found_via=found_via, status_code=status_code)
    if reader.bad_gzip:
        return SitemapReading(facts=evolve(found, problems=("bad_gzip",)))
    parse = _parse_text if _looks_like_text_sitemap(start) else _parse_xml
    return parse(buffered, reader, found, max_urls)


def _problems(reader: _BoundedReader, *, count: int, max_urls: int, base: list[str]) -> tuple[str, ...]:
    problems = list(base)
    if reader.bad_gzip:
        problems.append("bad_gzip")
    if reader.too_large:
        problems.append("too_large")
    if count > max_urls:
        problems.append("too_many_urls")
    return tuple(dict.fromkeys(problems))


def _parse_text(
    stream: "io.BufferedReader[_BoundedReader]", reader: _BoundedReader, found: SitemapFacts, max_urls: int
) -> SitemapReading:
    urls: list[str] = []
    count = 0
    for raw in io.TextIOWrapper(stream, encoding="utf-8", errors="replace"):
        line = raw.strip().lstrip("\ufeff")
        if not line:
            continue
        count += 1
        if count <= max_urls:
            urls.append(line)
    facts = evolve(
        found, url_count=count, problems=_problems(reader, count=count, max_urls=max_urls, base=[])
    )
    return SitemapReading(facts=facts, urls=tuple(urls))


def _parse_xml(
    stream: "io.BufferedReader[_BoundedReader]", reader: _BoundedReader, found: SitemapFacts, max_urls: int
) -> SitemapReading:
    listed: list[str] = []
    hreflangs: list[tuple[str, Hreflang]] = []
    count = 0
    root_name: str | None = None
    problems: list[str] = []
    entry_name = "url"
    events = etree.iterparse(
        stream,
        events=("start", "end"),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        for event, element in events:
            if root_name is None:
                root_name = _local(element.tag)
                if root_name not in ("urlset", "sitemapindex"):
                    problems.append("wrong_root")
                    break
                entry_name = "url" if root_name == "urlset" else "sitemap"
                continue
            if event != "end" or _local(element.tag) != entry_name:
                continue
            count += 1
            if count <= max_urls:
                loc = _entry(element, hreflangs)
                if loc:
                    listed.append(loc)
            # Entries are done with once read: drop them so memory stays flat on large files.
            element.clear()
            parent = element.getparent()
            if parent is not None:
                while element.getprevious() is not None:
                    del parent[0]
    except etree.XMLSyntaxError:
        if not reader.too_large and not reader.bad_gzip:
            problems.append("not_xml")
    if root_name is None and not problems and not reader.bad_gzip:
        problems.append("not_xml")
    is_index = root_name == "sitemapindex"
    facts = evolve(
        found,
        is_index=is_index,
        url_count=count,
        problems=_problems(reader, count=count, max_urls=max_urls, base=problems),
    )
    if is_index:
        return SitemapReading(facts=facts, sitemaps=tuple(listed))
    return SitemapReading(facts=facts, urls=tuple(listed), hreflangs=tuple(hreflangs))


def _entry(element: etree._Element, hreflangs: list[tuple[str, Hreflang]]) -> str | None:
    loc: str | None = None
    alternates: list[tuple[str, str]] = []
    for child in element:
        name = _local(child.tag)
        if name == "loc":
            loc = (child.text or "").strip() or None
        elif name == "link" and (child.get("rel") or "").strip().lower() == "alternate":
            lang, href = child.get("hreflang"), child.get("href")
            if lang is not None and href is not None:
                alternates.append((lang, href))
    if loc is not None:
        for lang, href in alternates:
            target = normalise(href, policy=_KEEP_ALL)
            hreflangs.append((loc, Hreflang(lang=lang, href=href, target=target, source="sitemap")))
    return loc
