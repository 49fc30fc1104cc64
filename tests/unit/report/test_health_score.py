"""The health score: the CHECKS.md formula, its bounds, monotonicity and which pages it counts."""

from hypothesis import given
from hypothesis import strategies as st

from siteaudit.adapters.report_json import report_json
from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.issue import Severity
from siteaudit.domain.report import Timings
from siteaudit.domain.score import FORMULA, counts_against_score, health_score, is_audited_page
from siteaudit.domain.tally import AuditIdentity, ReportTally


def test_a_site_with_one_page_in_four_broken_scores_75() -> None:
    assert health_score(pages_with_errors=25, audited_pages=100).score == 75


def test_halves_round_up() -> None:
    assert health_score(pages_with_errors=1, audited_pages=8).score == 88  # 87.5
    assert health_score(pages_with_errors=3, audited_pages=8).score == 63  # 62.5


def test_no_audited_pages_has_no_score_and_says_so_in_the_stats() -> None:
    score = health_score(pages_with_errors=0, audited_pages=0)

    assert score.score is None
    stats = report_json(
        ReportTally().build(
            AuditIdentity(crawl_id=1, site_url="https://retro-clock.example/"),
            catalogue=CATALOGUE,
            thresholds={},
            timings=Timings(
                crawl_s=None, finalize_s=0.0, site_checks_s=0.0, templates_s=0.0, pages_crawled=0
            ),
        )
    )["stats"]
    assert stats["score"] == {
        "value": None,
        "formula": FORMULA,
        "inputs": {"pages_with_errors": 0, "audited_pages": 0, "html_pages": 0},
    }


def test_bot_challenges_and_lesser_severities_do_not_count_as_errors() -> None:
    assert counts_against_score("title_missing", Severity.ERROR)
    assert not counts_against_score("bot_challenge", Severity.ERROR)
    assert not counts_against_score("thin_content", Severity.WARNING)
    assert not counts_against_score("canonical_missing", "notice")


def test_redirects_blocked_pages_and_non_html_resources_are_not_audited() -> None:
    def audited(**kw: object) -> bool:
        base: dict[str, object] = {
            "status_code": 200,
            "is_html": True,
            "redirected": False,
            "blocked": False,
            "fetch_failed": False,
        }
        return is_audited_page(**{**base, **kw})  # type: ignore[arg-type]

    assert audited()
    assert not audited(redirected=True)
    assert not audited(status_code=301)
    assert not audited(blocked=True)
    assert not audited(is_html=False)
    assert audited(status_code=304)
    assert audited(status_code=404, is_html=False)  # a broken URL is a page that failed
    assert audited(status_code=None, fetch_failed=True)


@given(st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 10_000))
def test_the_score_is_between_0_and_100_or_none_without_html_pages(
    errors: int, pages: int, html: int
) -> None:
    score = health_score(pages_with_errors=errors, audited_pages=pages, html_pages=html).score

    if min(pages, html) == 0:
        assert score is None
    else:
        assert score is not None and 0 <= score <= 100


def test_audited_pages_without_html_have_no_score() -> None:
    # A site whose page URLs all failed (no answer, errors without HTML): nothing to read as health.
    assert health_score(pages_with_errors=3, audited_pages=3, html_pages=0).score is None
    assert health_score(pages_with_errors=3, audited_pages=4, html_pages=1).score == 25


@given(st.integers(1, 10_000), st.data())
def test_adding_an_error_page_never_raises_the_score(pages: int, data: st.DataObject) -> None:
    errors = data.draw(st.integers(0, pages - 1))

    before = health_score(pages_with_errors=errors, audited_pages=pages).score
    after = health_score(pages_with_errors=errors + 1, audited_pages=pages).score

    assert after <= before


@given(st.integers(0, 10_000), st.integers(1, 10_000))
def test_adding_a_clean_page_never_lowers_the_score(errors: int, pages: int) -> None:
    errors = min(errors, pages)

    before = health_score(pages_with_errors=errors, audited_pages=pages).score
    after = health_score(pages_with_errors=errors, audited_pages=pages + 1).score

    assert after >= before


@given(st.integers(0, 10_000), st.integers(1, 10_000))
def test_the_score_matches_the_formula_a_reader_would_apply(errors: int, pages: int) -> None:
    errors = min(errors, pages)
    exact = 100 * (1 - errors / pages)

    assert abs(health_score(pages_with_errors=errors, audited_pages=pages).score - exact) <= 0.5 + 1e-9
