"""Index triage: one table per value class (the first rule that holds decides), and grouping."""

import pytest

from siteaudit.domain.triage import (
    ADVICE,
    THIN_WORDS,
    OpenTask,
    TriagePage,
    ValueClass,
    classify,
    link_tasks,
    triage,
)

URL = "https://retro-clock.example/clocks/1"
CRAWLED = "Crawled - currently not indexed"


def page(**facts: object) -> TriagePage:
    base: dict[str, object] = {
        "url": URL,
        "template": "/clocks/*",
        "coverage_state": CRAWLED,
        "word_count": 400,
    }
    return TriagePage(**(base | facts))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "facts",
    [
        {"coverage_state": "Excluded by 'noindex' tag"},
        {"indexing_state": "BLOCKED_BY_META_TAG"},
        {"indexing_state": "BLOCKED_BY_HTTP_HEADER"},
        {"robots_txt_state": "DISALLOWED"},
        {"coverage_state": "Blocked by robots.txt"},
        {"coverage_state": "Alternate page with proper canonical tag"},
        {"coverage_state": "Page with redirect"},
        {"user_canonical": URL + "?ref=x"},
        # Exclusion wins over every later rule.
        {"url": URL + "?sort=price", "word_count": 3, "indexing_state": "BLOCKED_BY_META_TAG"},
    ],
)
def test_intentionally_excluded(facts: dict[str, object]) -> None:
    assert classify(page(**facts)) is ValueClass.INTENTIONALLY_EXCLUDED


@pytest.mark.parametrize(
    "facts",
    [
        {"coverage_state": "Duplicate without user-selected canonical"},
        {"coverage_state": "Duplicate, Google chose different canonical than user"},
        {"google_canonical": "https://retro-clock.example/clocks/one", "user_canonical": URL},
        {"url": URL + "?color=red", "google_canonical": URL},  # before the parameter rule
    ],
)
def test_duplicate(facts: dict[str, object]) -> None:
    assert classify(page(**facts)) is ValueClass.DUPLICATE


@pytest.mark.parametrize(
    "facts",
    [{"url": URL + "?sort=price"}, {"url": URL + "?utm_source=mail", "word_count": 10}],
)
def test_low_value_param(facts: dict[str, object]) -> None:
    assert classify(page(**facts)) is ValueClass.LOW_VALUE_PARAM


@pytest.mark.parametrize("words", [0, 1, THIN_WORDS - 1])
def test_low_value_thin(words: int) -> None:
    assert classify(page(word_count=words)) is ValueClass.LOW_VALUE_THIN


@pytest.mark.parametrize(
    "facts",
    [
        {"word_count": THIN_WORDS},
        {"coverage_state": "Discovered - currently not indexed", "word_count": 2_000},
        {"google_canonical": URL, "user_canonical": URL, "indexing_state": "INDEXING_ALLOWED"},
    ],
)
def test_valuable_not_indexed(facts: dict[str, object]) -> None:
    assert classify(page(**facts)) is ValueClass.VALUABLE_NOT_INDEXED


def test_groups_by_template_and_class_valuable_first() -> None:
    pages = [
        page(url=URL + "?a", impressions_28d=5),
        page(url=URL + "?b", impressions_28d=7, coverage_state="Discovered - currently not indexed"),
        page(url=URL + "/2"),
        page(url="https://retro-clock.example/tag/x", template="/tag/*", word_count=10),
    ]
    groups = triage(pages, {"/clocks/*": 30, "/tag/*": 4})
    assert [(g.pattern, g.value_class, g.count, g.pattern_pages) for g in groups] == [
        ("/clocks/*", ValueClass.VALUABLE_NOT_INDEXED, 1, 30),
        ("/tag/*", ValueClass.LOW_VALUE_THIN, 1, 4),
        ("/clocks/*", ValueClass.LOW_VALUE_PARAM, 2, 30),
    ]
    params = groups[2]
    assert params.impressions_28d == 12
    assert dict(params.coverage_states) == {CRAWLED: 1, "Discovered - currently not indexed": 1}
    assert params.sample_urls == (URL + "?a", URL + "?b")
    assert params.action == ADVICE[ValueClass.LOW_VALUE_PARAM].action
    assert params.action.task_code is None and params.action.task_id is None
    assert all(ADVICE[c].action.steps and ADVICE[c].why for c in ValueClass)


def test_an_action_names_the_sites_task_for_its_template_and_class() -> None:
    pages = [
        page(url="https://retro-clock.example/tag/x", template="/tag/*", word_count=10),
        page(url=URL + "?a"),
        page(url=URL + "/2"),
        page(url="https://retro-clock.example/news/1", template="/news/*", word_count=10),
    ]
    tasks = [
        OpenTask("thin_content", "/tag/*", "a1b2c3d4e5f60718"),
        OpenTask("canonical_not_self", "/clocks/*", "00000000000000aa"),
        OpenTask("canonical_missing", "/clocks/*", "00000000000000bb"),  # the more specific code wins
        OpenTask("thin_content", "/other/*", "00000000000000cc"),  # another template: not this group's
    ]
    linked = {
        (g.pattern, g.value_class): (g.action.task_code, g.action.task_id)
        for g in link_tasks(triage(pages, {}), tasks)
    }
    assert linked == {
        ("/tag/*", ValueClass.LOW_VALUE_THIN): ("thin_content", "a1b2c3d4e5f60718"),
        ("/clocks/*", ValueClass.LOW_VALUE_PARAM): ("canonical_missing", "00000000000000bb"),
        ("/clocks/*", ValueClass.VALUABLE_NOT_INDEXED): (None, None),  # no single check behind it
        ("/news/*", ValueClass.LOW_VALUE_THIN): (None, None),  # no task for the template
    }
