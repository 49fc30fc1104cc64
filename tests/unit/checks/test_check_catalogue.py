"""The check catalogue against CHECKS.md, and the check tests against the catalogue."""

import re
from collections.abc import Sequence
from typing import Any

import pytest
from check_cases import PAGE_NEGATIVE, PAGE_POSITIVE, SITE_NEGATIVE, SITE_POSITIVE

from siteaudit.domain.catalogue import CATALOGUE, spec
from siteaudit.domain.error import NotFound
from siteaudit.domain.issue import CheckScope, Severity
from siteaudit.domain.thresholds import Thresholds

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTICE
PAGE, TARGETS, GRAPH, SITEMAP, SITE = (
    CheckScope.PAGE,
    CheckScope.PAGE_TARGETS,
    CheckScope.LINK_GRAPH,
    CheckScope.SITEMAP,
    CheckScope.SITE_WIDE,
)

# The core tables of CHECKS.md: code, default severity, scope (copied from the spec, not from the code).
CORE = {
    "http_4xx": (E, PAGE), "http_5xx": (E, PAGE), "fetch_failed": (E, PAGE), "bot_challenge": (E, PAGE),
    "rate_limited": (W, PAGE), "redirect_chain": (W, PAGE), "redirect_loop": (E, PAGE),
    "redirect_to_error": (E, PAGE), "redirect_temporary": (N, PAGE), "meta_refresh_redirect": (W, PAGE),
    "http_not_redirected_to_https": (W, PAGE), "slow_response": (W, PAGE), "html_too_large": (W, PAGE),
    "soft_404": (W, PAGE),
    "noindex": (N, PAGE), "nofollow_page": (N, PAGE), "robots_directive_conflict": (W, PAGE),
    "blocked_by_robots_txt": (W, SITE), "robots_txt_unreachable": (E, SITE), "robots_txt_missing": (N, SITE),
    "robots_txt_disallow_all": (E, SITE), "robots_txt_invalid": (W, SITE), "nosnippet_or_noimageindex": (N, PAGE),
    "canonical_missing": (N, PAGE), "canonical_multiple": (W, PAGE), "canonical_relative": (N, PAGE),
    "canonical_invalid": (W, PAGE), "canonical_header_mismatch": (W, PAGE), "canonical_not_self": (N, PAGE),
    "canonical_to_root": (W, PAGE), "canonical_target_error": (E, TARGETS),
    "canonical_target_redirect": (W, TARGETS), "canonical_target_noindex": (W, TARGETS),
    "canonical_chain": (W, TARGETS),
    "title_missing": (E, PAGE), "title_multiple": (W, PAGE), "title_too_long": (N, PAGE),
    "title_too_short": (N, PAGE), "title_duplicate": (W, SITE), "meta_description_missing": (W, PAGE),
    "meta_description_too_long": (N, PAGE), "meta_description_too_short": (N, PAGE),
    "meta_description_duplicate": (W, SITE), "meta_description_multiple": (W, PAGE),
    "h1_missing": (W, PAGE), "h1_multiple": (N, PAGE), "h1_duplicate": (N, SITE), "heading_order_skip": (N, PAGE),
    "thin_content": (W, PAGE), "duplicate_content_exact": (W, SITE), "duplicate_content_near": (N, SITE),
    "html_lang_missing": (N, PAGE), "html_lang_invalid": (N, PAGE), "viewport_missing": (W, PAGE),
    "charset_or_doctype_missing": (N, PAGE),
    "broken_internal_link": (E, TARGETS), "internal_link_to_redirect": (N, TARGETS),
    "broken_external_link": (N, TARGETS), "internal_nofollow_link": (N, PAGE), "orphan_page": (W, GRAPH),
    "deep_page": (N, GRAPH), "dead_end_page": (N, PAGE), "links_to_http": (N, PAGE),
    "non_descriptive_anchor": (N, PAGE), "uncrawlable_link": (N, PAGE), "localhost_link": (W, PAGE),
    "mixed_content": (W, PAGE),
    "sitemap_url_noindex": (W, SITEMAP), "sitemap_url_non_200": (W, SITEMAP),
    "sitemap_url_non_canonical": (W, SITEMAP), "sitemap_url_blocked": (W, SITEMAP), "sitemap_missing": (N, SITE),
    "sitemap_invalid": (E, SITEMAP),
    "hreflang_invalid_code": (W, PAGE), "hreflang_missing_return": (W, TARGETS), "hreflang_missing_self": (N, PAGE),
    "hreflang_missing_x_default": (N, PAGE), "hreflang_target_invalid": (W, TARGETS),
    "img_alt_missing": (W, PAGE), "img_broken": (W, TARGETS), "structured_data_invalid": (E, PAGE),
    "structured_data_missing": (N, PAGE), "open_graph_missing": (N, PAGE),
}  # fmt: skip

EXTENDED = [
    "url_uppercase",
    "url_underscores",
    "url_whitespace",
    "url_double_slash",
    "url_non_ascii",
    "url_repeated_segment",
    "too_many_links",
    "img_too_large",
    "img_missing_dimensions",
    "hsts_missing",
    "insecure_form",
    "hreflang_relative_url",
    "hreflang_lang_mismatch",
    "metas_in_body",
    "dom_too_large",
    "ai_crawler_blocked",
    "llms_txt_missing",
    # raw against rendered (audits with `render`)
    "js_changed_title",
    "js_changed_meta_description",
    "js_changed_canonical",
    "js_changed_robots",
    "js_changed_hreflang",
    "js_changed_h1",
    "links_only_after_render",
    "content_only_after_render",
    "render_failed",
    "render_incomplete",
    "render_console_errors",
    "render_failed_requests",
    "render_requests_refused",
]


def _codes(cases: Sequence[Any]) -> set[str]:
    return {case.values[0] for case in cases}


def test_every_check_of_checks_md_is_in_the_catalogue_and_nothing_else() -> None:
    assert set(CATALOGUE) == set(CORE) | set(EXTENDED)
    assert len(CORE) + len(EXTENDED) == 113


@pytest.mark.parametrize("code", sorted(CORE))
def test_core_checks_have_the_severity_and_scope_of_checks_md(code: str) -> None:
    entry = CATALOGUE[code]
    assert (entry.severity, entry.scope) == CORE[code]


def test_every_catalogue_code_has_a_positive_test() -> None:
    assert set(CATALOGUE) - (_codes(PAGE_POSITIVE) | _codes(SITE_POSITIVE)) == set()


def test_every_catalogue_code_has_a_negative_test() -> None:
    assert set(CATALOGUE) - (_codes(PAGE_NEGATIVE) | _codes(SITE_NEGATIVE)) == set()


def test_test_cases_name_only_catalogue_codes() -> None:
    named = _codes(PAGE_POSITIVE) | _codes(SITE_POSITIVE) | _codes(PAGE_NEGATIVE) | _codes(SITE_NEGATIVE)
    assert named <= set(CATALOGUE)


@pytest.mark.parametrize("code", sorted(CORE) + EXTENDED)
def test_every_entry_has_a_title_a_why_a_fix_and_a_group(code: str) -> None:
    entry = spec(code)
    assert entry.code == code
    assert entry.title and entry.group
    for text in (entry.why, entry.fix):
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]
        assert 1 <= len(sentences) <= 3, text


def test_only_page_scoped_checks_are_recheckable() -> None:
    assert spec("title_missing").recheckable
    assert spec("broken_internal_link").recheckable
    assert not spec("orphan_page").recheckable
    assert not spec("title_duplicate").recheckable


def test_an_unknown_check_code_is_not_found() -> None:
    with pytest.raises(NotFound) as raised:
        spec("title_too_purple")
    assert raised.value.code == "not_found"


def test_the_catalogue_cannot_be_changed_at_runtime() -> None:
    with pytest.raises(TypeError):
        CATALOGUE["title_missing"] = CATALOGUE["h1_missing"]  # type: ignore[index]


def test_thresholds_default_to_checks_md_and_report_themselves() -> None:
    stats = Thresholds().as_dict()
    assert stats["title_min_chars"] == 10
    assert stats["title_max_chars"] == 60
    assert stats["description_min_chars"] == 70
    assert stats["description_max_chars"] == 160
    assert stats["thin_content_words"] == 150
    assert stats["slow_response_ms"] == 800
    assert stats["html_max_bytes"] == 2 * 1024 * 1024
    assert stats["deep_page_depth"] == 5
    assert stats["max_links_per_page"] == 100
    assert stats["dom_max_nodes"] == 1500
    assert stats["near_duplicate_similarity"] == 0.9
    assert stats["soft_404_max_chars"] == 800
    assert stats["max_redirect_hops"] == 10
    assert stats["image_max_bytes"] == 500 * 1024


def test_thresholds_refuse_nonsense() -> None:
    with pytest.raises(ValueError):
        Thresholds(title_max_chars=-1)
    with pytest.raises(ValueError):
        Thresholds(near_duplicate_similarity=1.5)
