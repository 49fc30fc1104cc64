"""The diff against the previous audit: first audits, new and fixed issues, errors, samples."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from siteaudit.adapters.report_json import converter
from siteaudit.domain.diff import SAMPLE_LIMIT, Diff, PreviousAudit
from siteaudit.domain.diff import audit_diff as diff_value
from siteaudit.domain.issue import Severity

SITE = "https://retro-clock.example"
E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTICE


def audit_diff(
    previous: PreviousAudit | None, issues: list[tuple[str, Severity, str]], health_score: int
) -> dict[str, Any] | None:
    """The diff as the report stores and serves it."""
    diff = diff_value(previous, issues, health_score)
    return None if diff is None else converter.unstructure(diff, Diff)  # type: ignore[no-any-return]


def test_a_sites_first_audit_has_no_diff() -> None:
    assert audit_diff(None, [("title_missing", E, f"{SITE}/")], 90) is None


def test_new_and_fixed_issues_are_counted_by_check_and_url() -> None:
    previous = PreviousAudit.from_issues(
        41,
        80,
        [
            ("title_missing", E, f"{SITE}/a"),
            ("title_missing", E, f"{SITE}/b"),
            ("thin_content", W, f"{SITE}/a"),
        ],
    )
    current = [
        ("title_missing", E, f"{SITE}/a"),  # still there
        ("http_4xx", E, f"{SITE}/gone"),  # new error
        ("canonical_missing", N, f"{SITE}/a"),  # new notice
        ("canonical_missing", N, f"{SITE}/a"),  # same identity twice counts once
    ]

    diff = audit_diff(previous, current, 85)

    assert diff == {
        "previous_crawl_id": 41,
        "health_delta": 5,
        "new": 2,
        "fixed": 2,
        "new_errors": 1,
        "fixed_errors": 1,
        "new_samples": [
            {"check_code": "http_4xx", "severity": "error", "url": f"{SITE}/gone"},
            {"check_code": "canonical_missing", "severity": "notice", "url": f"{SITE}/a"},
        ],
    }


def test_an_unknown_previous_score_gives_no_health_delta() -> None:
    diff = audit_diff(PreviousAudit.from_issues(1, None, []), [], 70)

    assert diff is not None
    assert diff["health_delta"] is None


def test_samples_are_capped_and_do_not_depend_on_reading_order() -> None:
    issues = [("img_alt_missing", W, f"{SITE}/p/{i}") for i in range(500)]
    previous = PreviousAudit.from_issues(1, 50, [])

    forward = audit_diff(previous, issues, 50)
    backward = audit_diff(previous, list(reversed(issues)), 50)

    assert forward is not None and backward is not None
    assert len(forward["new_samples"]) == SAMPLE_LIMIT
    assert forward["new_samples"] == backward["new_samples"]


def test_a_large_diff_is_computed_with_sets() -> None:
    old = [("broken_internal_link", E, f"{SITE}/p/{i}") for i in range(60_000)]
    new = [("broken_internal_link", E, f"{SITE}/p/{i}") for i in range(30_000, 90_000)]

    diff = audit_diff(PreviousAudit.from_issues(1, 10, old), new, 20)

    assert diff is not None
    assert (diff["new"], diff["fixed"], diff["new_errors"], diff["fixed_errors"]) == (
        30_000,
        30_000,
        30_000,
        30_000,
    )


_issue = st.tuples(
    st.sampled_from(["title_missing", "thin_content", "canonical_missing"]),
    st.sampled_from([E, W, N]),
    st.integers(0, 20).map(lambda i: f"{SITE}/p/{i}"),
)


@given(st.lists(_issue, max_size=40), st.lists(_issue, max_size=40))
def test_new_and_fixed_agree_with_a_plain_set_difference(
    old: list[tuple[str, Severity, str]], new: list[tuple[str, Severity, str]]
) -> None:
    diff = audit_diff(PreviousAudit.from_issues(1, 50, old), new, 50)

    old_ids = {(c, u) for c, _, u in old}
    new_ids = {(c, u) for c, _, u in new}
    assert diff is not None
    assert diff["new"] == len(new_ids - old_ids)
    assert diff["fixed"] == len(old_ids - new_ids)
    old_errors = {(c, u) for c, s, u in old if s is E}
    new_errors = {(c, u) for c, s, u in new if s is E}
    assert diff["new_errors"] == len(new_errors - old_ids)
    assert diff["fixed_errors"] == len(old_errors - new_ids)
    assert {(s["check_code"], s["url"]) for s in diff["new_samples"]} <= new_ids - old_ids
