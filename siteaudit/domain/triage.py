"""Index triage (`GET /sites/{id}/index-triage`, docs/rest-api.md "Search console"): crawled pages the console
reports as not indexed, each put in one value class by the first rule that holds, then grouped by URL template
and class, each group with why and what to do. Pure: the pages, inspections and figures are arguments."""

import enum
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final
from urllib.parse import urlsplit

from attrs import evolve, frozen

from siteaudit.domain.thresholds import Thresholds

THIN_WORDS: Final = Thresholds().thin_content_words  # the thin_content check's limit
SAMPLES: Final = 5


class ValueClass(enum.StrEnum):
    """Why a crawled page is not indexed, as far as the site's own facts tell, in the order tried."""

    INTENTIONALLY_EXCLUDED = (
        "intentionally_excluded"  # noindex, robots.txt, a canonical or redirect elsewhere
    )
    DUPLICATE = "duplicate"  # the engine took another URL as the canonical one
    LOW_VALUE_PARAM = "low_value_param"  # a URL with query parameters (filters, sorting, tracking)
    LOW_VALUE_THIN = "low_value_thin"  # fewer words than the thin-content limit
    VALUABLE_NOT_INDEXED = "valuable_not_indexed"  # none of the above: a page that should rank


@frozen
class TriagePage:
    """One crawled page the console reports as not indexed, with what the rules read."""

    url: str
    template: str
    coverage_state: str
    word_count: int = 0
    indexing_state: str | None = None  # BLOCKED_BY_META_TAG, BLOCKED_BY_HTTP_HEADER, INDEXING_ALLOWED
    robots_txt_state: str | None = None  # ALLOWED, DISALLOWED
    google_canonical: str | None = None
    user_canonical: str | None = None
    impressions_28d: int = 0


_EXCLUDED_STATES: Final = (
    "noindex",
    "blocked by robots.txt",
    "alternate page with proper canonical",
    "redirect",
)


def classify(page: TriagePage) -> ValueClass:
    state = page.coverage_state.lower()
    if (
        (page.indexing_state or "").startswith("BLOCKED")
        or page.robots_txt_state == "DISALLOWED"
        or any(needle in state for needle in _EXCLUDED_STATES)
        or (page.user_canonical is not None and page.user_canonical != page.url)
    ):
        return ValueClass.INTENTIONALLY_EXCLUDED
    if "duplicate" in state or (page.google_canonical is not None and page.google_canonical != page.url):
        return ValueClass.DUPLICATE
    if urlsplit(page.url).query:
        return ValueClass.LOW_VALUE_PARAM
    if page.word_count < THIN_WORDS:
        return ValueClass.LOW_VALUE_THIN
    return ValueClass.VALUABLE_NOT_INDEXED


@frozen
class TriageAction:
    """What to do about a group; `task_code`/`task_id` name the site's fix task for it (see `link_tasks`)."""

    type: str
    steps: tuple[str, ...]
    text: str
    task_code: str | None = None
    task_id: str | None = None


@frozen
class Advice:
    why: str
    action: TriageAction


ADVICE: Final[Mapping[ValueClass, Advice]] = MappingProxyType(
    {
        ValueClass.VALUABLE_NOT_INDEXED: Advice(
            "substantial pages with their own URL that the engine crawled or found but chose not to index",
            TriageAction(
                "improve_and_link",
                (
                    "Make each page clearly distinct from its siblings (unique title, heading and text).",
                    "Link to these pages from indexed, well-linked pages.",
                    "List them in the XML sitemap and inspect one again after the next crawl.",
                ),
                "Strengthen and link these pages so the engine judges them worth indexing.",
            ),
        ),
        ValueClass.LOW_VALUE_PARAM: Advice(
            "URLs with query parameters (filters, sorting, tracking) that mostly repeat other pages",
            TriageAction(
                "canonicalize_parameters",
                (
                    "Point rel=canonical of parameter URLs at the URL without parameters.",
                    "Stop linking to parameter variants that add nothing, or disallow them in robots.txt.",
                ),
                "Consolidate parameter URLs onto their clean URL; nothing to index here.",
            ),
        ),
        ValueClass.LOW_VALUE_THIN: Advice(
            f"pages with fewer than {THIN_WORDS} words: too little for the engine to index",
            TriageAction(
                "improve_or_noindex",
                (
                    "Add useful content to the pages that should rank.",
                    "Mark the rest noindex, or merge them into a fuller page and redirect.",
                ),
                "Fill thin pages that matter; noindex or merge the others.",
            ),
        ),
        ValueClass.DUPLICATE: Advice(
            "pages the engine treats as duplicates of another URL",
            TriageAction(
                "consolidate_duplicates",
                (
                    "Declare one canonical URL per content with rel=canonical.",
                    "Link internally to the canonical URL only; redirect retired duplicates.",
                ),
                "Pick one URL per content and point every duplicate at it.",
            ),
        ),
        ValueClass.INTENTIONALLY_EXCLUDED: Advice(
            "pages excluded on purpose: noindex, robots.txt, a canonical or a redirect to another URL",
            TriageAction(
                "confirm_exclusion",
                (
                    "Check the exclusion is intended; remove noindex, the robots.txt rule or the canonical if not.",
                ),
                "Nothing to do if these pages should stay out of the index.",
            ),
        ),
    }
)


@frozen
class TriageGroup:
    pattern: str  # the URL template
    value_class: ValueClass
    count: int
    pattern_pages: int  # crawled pages of the template (indexed or not)
    coverage_states: Mapping[str, int]
    impressions_28d: int
    sample_urls: tuple[str, ...]
    why: str
    action: TriageAction


# Groups of pages that should rank come first.
_CLASS_ORDER: Final = tuple(ValueClass)[::-1]


# The checks whose fix task a value class's action points at, most specific first. Valuable and
# intentionally excluded pages have no single check behind them: their action names no task.
TASK_CODES: Final[Mapping[ValueClass, tuple[str, ...]]] = MappingProxyType(
    {
        ValueClass.LOW_VALUE_THIN: ("thin_content",),
        ValueClass.DUPLICATE: ("duplicate_content_exact", "duplicate_content_near", "canonical_missing"),
        ValueClass.LOW_VALUE_PARAM: ("canonical_missing", "canonical_not_self"),
    }
)


@frozen
class OpenTask:
    """A fix task the triage may point at: its check code, URL template and 16-hex id."""

    code: str
    template: str
    task_id: str


def link_tasks(groups: Iterable[TriageGroup], tasks: Iterable[OpenTask]) -> list[TriageGroup]:
    """Each group's action names the site's not-fixed task for its template and the first of its class's
    check codes that has one (`task_code`, `task_id`); a group with no such task keeps both null."""
    by_key = {(task.code, task.template): task for task in tasks}
    linked = []
    for group in groups:
        for code in TASK_CODES.get(group.value_class, ()):
            task = by_key.get((code, group.pattern))
            if task is not None:
                group = evolve(group, action=evolve(group.action, task_code=code, task_id=task.task_id))
                break
        linked.append(group)
    return linked


def triage(pages: Iterable[TriagePage], pattern_pages: Mapping[str, int]) -> list[TriageGroup]:
    """Group not-indexed pages by template and value class: valuable pages first, then by size."""
    groups: dict[tuple[str, ValueClass], list[TriagePage]] = {}
    for page in pages:
        groups.setdefault((page.template, classify(page)), []).append(page)
    out = []
    for (template, value_class), members in groups.items():
        states: dict[str, int] = {}
        for member in members:
            states[member.coverage_state] = states.get(member.coverage_state, 0) + 1
        advice = ADVICE[value_class]
        out.append(
            TriageGroup(
                pattern=template,
                value_class=value_class,
                count=len(members),
                pattern_pages=pattern_pages.get(template, len(members)),
                coverage_states=dict(sorted(states.items(), key=lambda kv: (-kv[1], kv[0]))),
                impressions_28d=sum(m.impressions_28d for m in members),
                sample_urls=tuple(sorted(m.url for m in members)[:SAMPLES]),
                why=advice.why,
                action=advice.action,
            )
        )
    return sorted(out, key=lambda g: (_CLASS_ORDER.index(g.value_class), -g.count, g.pattern))


@frozen
class TriageSummary:
    crawled: int  # pages of the latest audit answering 200
    inspected: int
    not_indexed: int  # crawled pages the console reports as not indexed
    impressions_28d: int
    by_class: Mapping[str, int]


@frozen
class IndexTriage:
    """`GET /sites/{id}/index-triage`."""

    site_id: int
    demo: bool
    summary: TriageSummary
    groups: tuple[TriageGroup, ...]
    total_groups: int
