"""The issue rows of `/v1/crawls/{id}/issues`, built directly, say what the converter would say."""

from typing import Any

import orjson

from siteaudit.adapters.rest import views
from siteaudit.adapters.rest.views import issue_row
from siteaudit.domain.issue import Issue, Severity


def issue_row_by_converter(issue: Issue) -> dict[str, Any]:
    """The row the long way: the declared view class through the views' converter."""
    return views._json(
        views.Issue(
            check_code=issue.check_code,
            severity=issue.severity,
            url=issue.url,
            template=issue.template,
            details=dict(issue.details),
        )
    )


def test_an_issue_row_is_the_converters_row() -> None:
    issues = [
        Issue(
            "broken_link",
            Severity.ERROR,
            "https://retro-clock.example/a",
            "/[slug]",
            {"target": "x", "status": 404},
        ),
        Issue("title_missing", Severity.WARNING, "https://retro-clock.example/", "", {}),
        Issue(
            "images_without_alt",
            Severity.NOTICE,
            "https://retro-clock.example/b",
            "/b",
            {"images": ["https://retro-clock.example/i.png"], "nested": {"n": [1, 2.5, None, True]}},
        ),
    ]
    for issue in issues:
        assert issue_row(issue) == issue_row_by_converter(issue)
        assert list(issue_row(issue)) == list(issue_row_by_converter(issue))  # the same key order
        assert orjson.dumps(issue_row(issue)) == orjson.dumps(issue_row_by_converter(issue))
