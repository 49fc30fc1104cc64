"""What the CLI prints for people carries no terminal escape and no spreadsheet formula, whatever a crawled
page says (docs/security.md, "Human output: terminal escapes and spreadsheet formulas"); `--json` keeps
the exact data."""

import csv
import io
import json
import re

from click.testing import CliRunner, Result

from siteaudit.entrypoints.cli import main
from tests.unit.remote.conftest import Crawler, Service

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\\u202etxt.exe"
TITLES = {
    "/": ESCAPES,
    "/formula": '=HYPERLINK("https://evil.example/","x")',
    "/plus": "+1+cmd|' /C calc'!A0",
    "/minus": "-2+3+cmd|' /C calc'!A0",
    "/at": "@SUM(1+1)*cmd|' /C calc'!A0",
}
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def page(title: str) -> str:
    links = "".join(f'<a href="{path}">{path}</a>' for path in TITLES)
    return f"<!doctype html><html><head><title>{title}</title></head><body>{links}</body></html>"


def cli(service: Service, *args: str) -> Result:
    runner = CliRunner(env={"SITEAUDIT_URL": service.root, "SITEAUDIT_API_KEY": service.keys.owner})
    return runner.invoke(main, list(args))


def audited(service: Service) -> str:
    for path, title in TITLES.items():
        service.publish(path, page(title))
    with Crawler(service, every_s=0.05):
        result = cli(service, "audit", service.site_url, "--max-pages", "10", "--json")
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["crawl_id"])


def test_crawled_titles_reach_csv_and_text_without_escapes_or_formulas(service: Service) -> None:
    crawl_id = audited(service)
    as_csv = cli(service, "list-pages", crawl_id, "--csv")
    assert as_csv.exit_code == 0, as_csv.output
    assert not CONTROL.search(as_csv.stdout.replace("\r\n", "")), repr(as_csv.stdout)
    assert all(line.startswith('"') for line in as_csv.stdout.splitlines())  # every cell quoted
    titles = {row["title"] for row in csv.DictReader(io.StringIO(as_csv.stdout))}
    assert "]0;pwned[2J]8;;https://evil.example/\\click]8;;\\txt.exe" in titles
    for path in ("/formula", "/plus", "/minus", "/at"):
        assert "'" + TITLES[path] in titles
    for command in (("list-pages", crawl_id), ("get-report", crawl_id), ("get-fix-prompt", crawl_id)):
        text = cli(service, *command)
        assert text.exit_code == 0, text.output
        assert not CONTROL.search(text.output), (command, text.output)


def test_json_keeps_the_exact_titles_with_no_raw_control_character(service: Service) -> None:
    crawl_id = audited(service)
    as_json = cli(service, "list-pages", crawl_id, "--json")
    assert as_json.exit_code == 0, as_json.output
    assert not CONTROL.search(as_json.stdout)
    assert {row["title"] for row in json.loads(as_json.stdout)["data"]} >= set(TITLES.values())
