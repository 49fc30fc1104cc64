"""Page facts as a `crawl_pages` row: the listed and filtered facts as columns, the rest as one JSON document.

The JSON half is made by a cattrs converter (one per boundary: this one is the row's) that leaves out every
field equal to its default, so a plain page costs a few dozen bytes, and that leaves out what the columns
or other tables already hold: the column facts, `html.word_count`, and `html.links` (kept in crawl_links).
"""

from typing import Any, Final

from cattrs.fns import identity
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.json import make_converter

from siteaudit.domain.facts import FetchError, HtmlFacts, PageFacts
from siteaudit.ports.crawl import PageSummary

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
        **{name: override(omit=True) for name in COLUMN_FACTS},  # type: ignore[arg-type]
    ),
)
facts_converter.register_structure_hook(
    PageFacts, make_dict_structure_fn(PageFacts, facts_converter, _cattrs_forbid_extra_keys=False)
)


def page_values(page: PageFacts, *, template: str) -> dict[str, Any]:
    """The row of one page, minus the audit and URL ids; `facts` is a JSON-ready dict."""
    html = page.html
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
        "facts": facts_converter.unstructure(page, PageFacts),
    }


def page_from_row(row: Any, url: str) -> PageFacts:
    document: dict[str, Any] = dict(row.facts)
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


def summary_from_row(row: Any) -> PageSummary:
    return PageSummary(
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
    )
