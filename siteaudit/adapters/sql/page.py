"""Page facts as a `crawl_pages` row: the listed and filtered facts as columns, the rest as JSON documents.

The JSON is made by a cattrs converter (one per boundary: this one is the row's) that leaves out every
field equal to its default, so a plain page costs a few dozen bytes, and that leaves out what the columns
or other tables already hold: the column facts, `html.word_count`, and `html.links` (kept in crawl_links).

The document is split in two: `site`, the facts the site checks read (`SITE_PAGE_FIELDS`,
`SITE_HTML_FIELDS`) but the sketch, which goes to `sketch` as packed 64-bit values; and `facts`, the rest.
Finalisation reads the columns, `site` and `sketch` only, and builds the facts by hand (`site_page`):
no cattrs dispatch per field and element. Rows written before the split have everything in `facts`.
"""

import array
import sys
from collections.abc import Mapping
from typing import Any, Final

from cattrs.fns import identity
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.json import make_converter

from siteaudit.domain.checks.site import SITE_HTML_FIELDS, SITE_PAGE_FIELDS
from siteaudit.domain.facts import FetchError, Hop, Hreflang, HtmlFacts, PageFacts
from siteaudit.ports.crawl import EXCLUDED_BY_ROBOTS_TXT, PageRow

COLUMN_FACTS: Final = (
    "url",
    "depth",
    "status_code",
    "fetch_error",
    "content_type",
    "blocked_by",
    "in_sitemap",
)

facts_converter = make_converter(omit_if_default=True)
# Values JSON already takes as they are: with the identity hook the generated function copies the attribute
# instead of dispatching a call per field, which is most of the cost of writing a page row.
_PLAIN: Final = frozenset(
    {str | None, int | None, tuple[str, ...], tuple[int, ...], tuple[tuple[str, str], ...]}
)
facts_converter.register_unstructure_hook_func(lambda kind: kind in _PLAIN, identity)
facts_converter.register_unstructure_hook(
    HtmlFacts,
    make_dict_unstructure_fn(
        HtmlFacts,
        facts_converter,
        _cattrs_omit_if_default=True,
        links=override(omit=True),
        word_count=override(omit=True),
    ),
)
facts_converter.register_unstructure_hook(
    PageFacts,
    make_dict_unstructure_fn(
        PageFacts,
        facts_converter,
        _cattrs_omit_if_default=True,
        # `extracted` is kept in crawl_extracts (docs/extraction.md).
        **{name: override(omit=True) for name in (*COLUMN_FACTS, "extracted")},  # type: ignore[arg-type]
    ),
)
facts_converter.register_structure_hook(
    PageFacts, make_dict_structure_fn(PageFacts, facts_converter, _cattrs_forbid_extra_keys=False)
)
# JSON arrays of plain values become tuples whole, not element by element through a hook each.
_PLAIN_TUPLES: Final = frozenset({tuple[str, ...], tuple[int, ...]})
facts_converter.register_structure_hook_func(
    lambda kind: kind in _PLAIN_TUPLES, lambda value, _: tuple(value)
)

# The `site` document's keys: what the site checks read that no column holds (the sketch has its own).
SITE_KEYS: Final = tuple(sorted(SITE_PAGE_FIELDS - set(COLUMN_FACTS) - {"html"}))
SITE_HTML_KEYS: Final = tuple(sorted(SITE_HTML_FIELDS - {"sketch"}))
_BIG_ENDIAN: Final = sys.byteorder == "big"


def pack_sketch(sketch: tuple[int, ...]) -> bytes | None:
    """The sketch as little-endian unsigned 64-bit values; None when a value does not fit."""
    try:
        packed = array.array("Q", sketch)
    except OverflowError:
        return None
    if _BIG_ENDIAN:
        packed.byteswap()
    return packed.tobytes()


def unpack_sketch(data: bytes) -> tuple[int, ...]:
    values = array.array("Q")
    values.frombytes(data)
    if _BIG_ENDIAN:
        values.byteswap()
    return tuple(values)


def page_values(page: PageFacts, *, template: str) -> dict[str, Any]:
    """The row of one page, minus the audit and URL ids; `facts` and `site` are JSON-ready dicts."""
    html = page.html
    facts: dict[str, Any] = facts_converter.unstructure(page, PageFacts)
    site = {key: facts.pop(key) for key in SITE_KEYS if key in facts}
    sketch = None
    html_facts = facts.get("html")
    if html_facts is not None:
        site["html"] = {key: html_facts.pop(key) for key in SITE_HTML_KEYS if key in html_facts}
        if "sketch" in html_facts:
            sketch = pack_sketch(html.sketch) if html is not None else None
            if sketch is not None:
                del html_facts["sketch"]
            else:
                site["html"]["sketch"] = html_facts.pop("sketch")
    return {
        "status_code": page.status_code,
        "depth": page.depth,
        "title": html.titles[0] if html is not None and html.titles else None,
        "meta_description": html.meta_descriptions[0]
        if html is not None and html.meta_descriptions
        else None,
        "word_count": html.word_count if html is not None else 0,
        "blocked_by": page.blocked_by,
        "fetch_error": None if page.fetch_error is None else page.fetch_error.value,
        "content_type": page.content_type,
        "template": template,
        "in_sitemap": page.in_sitemap,
        "facts": facts,
        "site": site,
        "sketch": sketch,
    }


def page_from_row(row: Any, url: str) -> PageFacts:
    document: dict[str, Any] = dict(row.facts)
    site: Mapping[str, Any] | None = row.site
    if site is not None:
        for key, value in site.items():
            if key == "html":
                document["html"] = {**document.get("html", {}), **value}
            else:
                document[key] = value
    if row.sketch is not None and document.get("html") is not None:
        document["html"]["sketch"] = unpack_sketch(row.sketch)
    document.update(
        url=url,
        depth=row.depth,
        status_code=row.status_code,
        fetch_error=row.fetch_error,
        content_type=row.content_type,
        blocked_by=row.blocked_by,
        in_sitemap=row.in_sitemap,
    )
    if document.get("html") is not None:
        document["html"] = {**document["html"], "word_count": row.word_count}
    return facts_converter.structure(document, PageFacts)


def site_page(
    url: str,
    depth: int,
    status_code: int | None,
    fetch_error: str | None,
    content_type: str | None,
    blocked_by: str | None,
    in_sitemap: bool,
    site: Mapping[str, Any],
    sketch: bytes | None,
) -> PageFacts:
    """A page's facts for the site checks, from its columns, `site` document and sketch: the fields they
    read are set, the others left at their defaults (`CrawlStore.stream_site_pages`)."""
    html = None
    document = site.get("html")
    if document is not None:
        get = document.get
        hreflangs = get("hreflangs")
        html = HtmlFacts(
            titles=tuple(get("titles", ())),
            meta_descriptions=tuple(get("meta_descriptions", ())),
            meta_robots=tuple(get("meta_robots", ())),
            canonicals=tuple(get("canonicals", ())),
            base_href=get("base_href"),
            h1s=tuple(get("h1s", ())),
            hreflangs=tuple(Hreflang(**h) for h in hreflangs) if hreflangs else (),
            fingerprint=get("fingerprint", ""),
            sketch=unpack_sketch(sketch) if sketch is not None else tuple(get("sketch", ())),
        )
    get = site.get
    redirects = get("redirects")
    headers = get("headers")
    return PageFacts(
        url=url,
        depth=depth,
        status_code=status_code,
        final_url=get("final_url"),
        redirects=tuple(Hop(**hop) for hop in redirects) if redirects else (),
        fetch_error=None if fetch_error is None else FetchError(fetch_error),
        content_type=content_type,
        headers=tuple((name, value) for name, value in headers) if headers else (),
        x_robots_tag=tuple(get("x_robots_tag", ())),
        link_canonicals=tuple(get("link_canonicals", ())),
        bytes=get("bytes", 0),
        blocked_by=blocked_by,
        in_sitemap=in_sitemap,
        disallowed=get("disallowed", False),
        resource=get("resource", False),
        html=html,
    )


def summary_from_row(row: Any) -> PageRow:
    return PageRow(
        url_id=row.url_id,
        url=row.url,
        status_code=row.status_code,
        depth=row.depth,
        title=row.title,
        meta_description=row.meta_description,
        word_count=row.word_count,
        blocked_by=row.blocked_by,
        fetch_error=None if row.fetch_error is None else FetchError(row.fetch_error),
        content_type=row.content_type,
        template=row.template,
        in_sitemap=row.in_sitemap,
        excluded_by=EXCLUDED_BY_ROBOTS_TXT if row.disallowed else None,
    )
