"""The "Use it from Python" example of docs/getting-started.md runs as written, against a local site instead of
example.com."""

import contextlib
import io
import re
from pathlib import Path

from pytest_httpserver import HTTPServer

from siteaudit.domain.report import Report

GETTING_STARTED = Path(__file__).resolve().parents[3] / "docs" / "getting-started.md"
PAGE = (
    "<!doctype html><html lang=en><head><meta charset=utf-8><title>Retro Clock</title></head>"
    "<body><h1>Clocks</h1><a href='/about'>About</a> <a href='/gone'>Old page</a></body></html>"
)


def python_example() -> str:
    section = GETTING_STARTED.read_text().split("## Use it from Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1
    code: str = blocks[0]
    return code


def test_the_python_example_is_about_ten_lines() -> None:
    assert 10 <= len(python_example().strip().splitlines()) <= 16


def test_the_python_example_audits_a_site_and_prints_its_report(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    httpserver.expect_request("/about").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    httpserver.no_handler_status_code = 404
    code = python_example()
    # The only changes: the local site for example.com, and the SSRF guard told it may reach it.
    for written, local in (
        ('"https://example.com/"', repr(httpserver.url_for("/"))),
        (
            'Settings(database_url="memory://")',
            'Settings(database_url="memory://", allow_networks=("127.0.0.0/8",))',
        ),
    ):
        assert code.count(written) == 1
        code = code.replace(written, local)
    printed = io.StringIO()
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(GETTING_STARTED), "exec"), namespace)

    report = namespace["report"]
    assert isinstance(report, Report)
    assert report.totals.pages == 3
    assert report.issue_counts.error >= 1  # the broken link
    assert printed.getvalue() == f"{report.health_score} 3 {report.issue_counts.error}\n"
