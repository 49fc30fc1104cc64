"""Raw against rendered (docs/checks.md, group `rendering`): what a page's scripts changed, what only a
browser sees, and what went wrong while rendering it. Judged from `PageFacts.rendering` (the raw page's
declarations and the rendering's outcome) against `PageFacts.html` (the rendered DOM's facts).
"""

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.facts import HtmlFacts, LinkKind, PageFacts
from siteaudit.domain.issue import Issue
from siteaudit.domain.render import RenderEnd, RenderFacts, RequestNote

# "Main content only present after rendering": the rendered page has at least this many words, and the
# raw page fewer than this share of them.
CONTENT_MIN_WORDS: Final = 100
CONTENT_RAW_SHARE: Final = 0.5
SAMPLE: Final = 10


def _issue(code: str, page: PageFacts, **details: Any) -> Issue:
    return Issue(check_code=code, severity=CATALOGUE[code].severity, url=page.url, details=details)


def _norm(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(" ".join(v.split()).casefold() for v in values)


def _notes(notes: Iterable[RequestNote]) -> list[dict[str, str]]:
    return [{"url": n.url, "reason": n.reason} for n in notes]


def _robots_tokens(values: Iterable[str]) -> frozenset[str]:
    return frozenset(t.strip() for v in values for t in v.lower().split(",") if t.strip())


def render_issues(page: PageFacts, html: HtmlFacts) -> Iterator[Issue]:
    """Every rendering check of a rendered content page (nothing for a page that was not rendered)."""
    rendering = page.rendering
    if rendering is None:
        return
    yield from _outcome_issues(page, rendering)
    raw = rendering.raw
    if raw is None or rendering.end in (RenderEnd.CRASHED, RenderEnd.FAILED):
        return  # no rendered DOM: `html` is still the raw page's
    changed: tuple[tuple[str, Callable[[], tuple[Any, Any]]], ...] = (
        ("js_changed_title", lambda: (_norm(raw.titles), _norm(html.titles))),
        (
            "js_changed_meta_description",
            lambda: (_norm(raw.meta_descriptions), _norm(html.meta_descriptions)),
        ),
        ("js_changed_canonical", lambda: (raw.canonicals, html.canonicals)),
        ("js_changed_robots", lambda: (_robots_tokens(raw.meta_robots), _robots_tokens(html.meta_robots))),
        (
            "js_changed_hreflang",
            lambda: (
                frozenset(raw.hreflangs),
                frozenset((h.lang, h.href) for h in html.hreflangs if h.source == "html"),
            ),
        ),
        ("js_changed_h1", lambda: (_norm(raw.h1s), _norm(html.h1s))),
    )
    sources = {
        "js_changed_title": (raw.titles, html.titles),
        "js_changed_meta_description": (raw.meta_descriptions, html.meta_descriptions),
        "js_changed_canonical": (raw.canonicals, html.canonicals),
        "js_changed_robots": (raw.meta_robots, html.meta_robots),
        "js_changed_hreflang": (
            tuple(f"{lang} {href}" for lang, href in raw.hreflangs),
            tuple(f"{h.lang} {h.href}" for h in html.hreflangs if h.source == "html"),
        ),
        "js_changed_h1": (raw.h1s, html.h1s),
    }
    for code, compare in changed:
        before, after = compare()
        if before != after:
            shown_raw, shown_rendered = sources[code]
            yield _issue(code, page, raw=list(shown_raw), rendered=list(shown_rendered))
    yield from _links_and_content(page, html, rendering)


def _outcome_issues(page: PageFacts, rendering: RenderFacts) -> Iterator[Issue]:
    if rendering.end in (RenderEnd.CRASHED, RenderEnd.FAILED):
        yield _issue("render_failed", page, end=rendering.end.value, detail=rendering.detail)
    elif rendering.end is RenderEnd.TIMEOUT or rendering.over_budget is not None:
        yield _issue(
            "render_incomplete",
            page,
            over_budget=rendering.over_budget or "time",
            elapsed_ms=rendering.elapsed_ms,
            requests=rendering.requests,
            bytes=rendering.bytes,
            detail=rendering.detail,
        )
    if rendering.console_error_count:
        yield _issue(
            "render_console_errors",
            page,
            count=rendering.console_error_count,
            errors=list(rendering.console_errors),
        )
    if rendering.failed_count:
        yield _issue(
            "render_failed_requests", page, count=rendering.failed_count, requests=_notes(rendering.failed)
        )
    if rendering.refused_count:
        yield _issue(
            "render_requests_refused", page, count=rendering.refused_count, requests=_notes(rendering.refused)
        )


def _links_and_content(page: PageFacts, html: HtmlFacts, rendering: RenderFacts) -> Iterator[Issue]:
    raw = rendering.raw
    assert raw is not None
    before = frozenset(raw.links)
    only_rendered = list(
        dict.fromkeys(
            link.target
            for link in html.links
            if link.kind is LinkKind.A and link.internal and link.target not in before
        )
    )
    if only_rendered:
        yield _issue(
            "links_only_after_render", page, count=len(only_rendered), examples=only_rendered[:SAMPLE]
        )
    words = html.word_count
    if words >= CONTENT_MIN_WORDS and raw.word_count < words * CONTENT_RAW_SHARE:
        yield _issue("content_only_after_render", page, raw_words=raw.word_count, rendered_words=words)
