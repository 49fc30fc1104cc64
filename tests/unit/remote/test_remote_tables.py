"""What the remote commands print for people: every list as a table of its rows with the total and the
command of the next page, the ownership proofs of a registered site, next steps named as `siteaudit`
commands (never an agent tool's name), CSV with nested values flattened, `wait-for-*` exiting 4 when they
give up, and the one progress bar of the in-process and the remote `siteaudit audit`."""

import csv
import io
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

import pytest
from click.testing import Result

from siteaudit.adapters.mcp.tools import tool_specs
from siteaudit.adapters.text import csv_records, flatten
from siteaudit.bootstrap import USE_CASES
from siteaudit.entrypoints.remote import EXIT_STILL_RUNNING
from siteaudit.entrypoints.remote_views import VIEWS
from tests.integration.rest.live import AllowAllLimiter
from tests.unit.remote.conftest import Crawler, Service
from tests.unit.remote.test_remote_cli import cli

TOOLS = tool_specs(USE_CASES)


@pytest.fixture
def limiter() -> AllowAllLimiter:
    """These tests read what the commands print, not the limits: they send more calls a minute than a key
    may, and each 429 cost a Retry-After second (26 s of the 35 s of the list test)."""
    return AllowAllLimiter()


TOOL_NAMES = re.compile(r"\b(" + "|".join(t.name for t in TOOLS if "_" in t.name) + r")\b")


def rows_shown(result: Result, rows: Sequence[dict[str, Any]], *fields: str, some: bool = True) -> None:
    """Each row is one line of the output holding the row's `fields` (and there are `some` rows)."""
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert rows or not some, "the answer has rows to show"
    for row in rows:
        values = ["" if row[name] is None else str(row[name]) for name in fields]
        assert any(all(v in line for v in values) for line in lines), (values, result.stdout)


def as_json(service: Service, *args: str) -> Any:
    result = cli(service, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_every_list_command_prints_a_table_of_its_rows(service: Service) -> None:
    site_id = str(service.audited_site())
    crawl_id = str(as_json(service, "list-audits")["data"][0]["crawl_id"])
    listed = {
        ("list-audits",): ("data", ("crawl_id", "site_url", "status", "health_score")),
        ("list-issues", crawl_id): ("data", ("check_code", "url", "severity")),
        ("list-pages", crawl_id): ("data", ("url", "status_code", "title")),
        ("get-report", crawl_id): ("issues", ("check_code", "severity", "count")),
        ("list-sites",): ("data", ("id", "url", "monitoring")),
        ("list-site-tasks", site_id): ("tasks", ("id", "title", "severity", "impact", "status")),
        ("list-team-tasks",): ("tasks", ("site_id", "id", "title")),
        ("get-console-summary", site_id): ("templates", ("template", "pages", "indexed")),
        ("inspect-urls", site_id, service.site_url): ("results", ("url", "verdict", "coverage_state")),
    }
    for command, (field, columns) in listed.items():
        answer = as_json(service, *command)
        rows_shown(cli(service, *command), answer[field], *columns)
    # The demo console's figures depend on the URLs (the port): these lists may be empty.
    for command, field, columns in (
        (("list-not-indexed", site_id), "groups", ("reason", "template", "pages")),
        (("get-index-triage", site_id), "groups", ("pattern", "value_class")),
    ):
        rows_shown(cli(service, *command), as_json(service, *command)[field], *columns, some=False)
    found = as_json(service, "get-console-opportunities", site_id)
    shown = cli(service, "get-console-opportunities", site_id)
    for kind in ("low_ctr", "striking_distance", "canonical_mismatch"):
        rows_shown(shown, found[kind], "url", "clicks_28d", "impressions_28d", some=False)
    templates = as_json(service, "get-templates", crawl_id)["templates"]
    pairs = [{"template": t["template"], **i} for t in templates for i in t["issues"]]
    rows_shown(cli(service, "get-templates", crawl_id), pairs, "template", "check_code", "severity")
    task = as_json(service, "list-site-tasks", site_id)["tasks"][0]["id"]
    urls = as_json(service, "get-task", site_id, task)["urls"]["data"]
    rows_shown(cli(service, "get-task", site_id, task), urls, "url")


def test_a_paginated_list_says_its_total_and_the_command_of_the_next_page(service: Service) -> None:
    crawl_id = str(service.audited_site() and as_json(service, "list-audits")["data"][0]["crawl_id"])
    total = as_json(service, "list-issues", crawl_id)["meta"]["total"]
    first = cli(service, "list-issues", crawl_id, "--severity", "notice", "--per-page", "2")
    notices = as_json(service, "list-issues", crawl_id, "--severity", "notice", "--per-page", "2")
    assert notices["meta"]["total"] > 2 and total > notices["meta"]["total"]
    assert (
        f"2 of {notices['meta']['total']} issues (page 1 of {notices['meta']['last_page']})" in first.stdout
    )
    command = f"siteaudit list-issues {crawl_id} --severity notice --per-page 2 --page 2"
    assert f"Next page: `{command}`" in first.stdout
    second = cli(service, *command.split()[1:])
    rows_shown(second, as_json(service, *command.split()[1:])["data"], "check_code", "url")
    last = notices["meta"]["last_page"]
    on_last = cli(
        service, "list-issues", crawl_id, "--severity", "notice", "--per-page", "2", "--page", str(last)
    )
    assert "Next page" not in on_last.stdout


def test_register_site_shows_what_to_publish_and_the_next_command(service: Service) -> None:
    result = cli(service, "register-site", service.site_url, key=service.keys.rival)
    assert result.exit_code == 0, result.output
    listed = json.loads(cli(service, "list-sites", "--json", key=service.keys.rival).stdout)["data"][0]
    proofs = json.loads(
        cli(service, "get-site-verification", str(listed["id"]), "--json", key=service.keys.rival).stdout
    )["methods"]
    out = result.stdout
    token = proofs["file"]["body"].strip()
    assert f"Its ownership token: {token}" in out
    for shown in (
        proofs["dns"]["name"],
        proofs["dns"]["value"],
        proofs["meta"]["tag"],
        proofs["file"]["url"],
    ):
        assert shown in out, (shown, out)
    assert f"`siteaudit verify-site {listed['id']}`" in out
    detail = cli(service, "get-site", str(listed["id"]), key=service.keys.rival)
    assert (
        proofs["meta"]["tag"] in detail.stdout and f"`siteaudit verify-site {listed['id']}`" in detail.stdout
    )


def test_next_steps_are_cli_commands_never_tool_names(service: Service) -> None:
    site_id = str(service.audited_site())
    crawl_id = str(as_json(service, "list-audits")["data"][0]["crawl_id"])
    task = as_json(service, "list-site-tasks", site_id)["tasks"][0]["id"]
    started = cli(service, "start-site-audit", site_id, "--max-pages", "3")
    assert started.exit_code == 0, started.output
    new_id = as_json(service, "list-audits")["data"][0]["crawl_id"]
    assert (
        f"Next: `siteaudit wait-for-audit {new_id}` waits for it, then `siteaudit get-report {new_id}`"
        in (started.stdout)
    )
    commands = [
        ("ping",),
        ("get-account",),
        ("list-audits",),
        ("get-audit", crawl_id),
        ("get-report", crawl_id),
        ("list-issues", crawl_id),
        ("list-pages", crawl_id),
        ("get-templates", crawl_id),
        ("get-diff", crawl_id),
        ("list-sites",),
        ("get-site", site_id),
        ("get-site-verification", site_id),
        ("get-console-summary", site_id),
        ("list-not-indexed", site_id),
        ("get-console-url", site_id, service.site_url),
        ("get-console-opportunities", site_id),
        ("get-index-triage", site_id),
        ("get-indexnow-status", site_id),
        ("list-site-tasks", site_id),
        ("list-team-tasks",),
        ("get-task", site_id, task),
        ("get-site-fix-impact", site_id),
        ("get-team-fix-impact",),
    ]
    for command in commands:
        result = cli(service, *command)
        assert result.exit_code == 0, (command, result.output)
        assert not TOOL_NAMES.search(result.stdout), (command, result.stdout)
        assert "Call " not in result.stdout and "call " not in result.stdout, (command, result.stdout)
    assert f"`siteaudit get-report {crawl_id}`" in cli(service, "get-audit", crawl_id).stdout
    assert "`siteaudit verify-site" not in cli(service, "get-site", site_id).stdout  # verified already


def test_every_tool_command_has_a_view() -> None:
    assert {t.name for t in TOOLS} == set(VIEWS)


def test_csv_flattens_nested_values_never_json_in_a_cell(service: Service) -> None:
    site_id = str(service.audited_site())
    crawl_id = str(as_json(service, "list-audits")["data"][0]["crawl_id"])
    issues = list(csv.DictReader(io.StringIO(cli(service, "list-issues", crawl_id, "--csv").stdout)))
    assert {"details.target", "details.status"} <= set(issues[0])  # the columns of every row, not the first's
    broken = next(r for r in issues if r["check_code"] == "broken_internal_link")
    assert broken["details.status"] == "404" and broken["details.target"].endswith("/gone")
    site = next(csv.DictReader(io.StringIO(cli(service, "get-site", site_id, "--csv").stdout)))
    assert site["latest_crawl.crawl_id"] == crawl_id and site["verify.path"].endswith(".txt")
    templates = list(csv.DictReader(io.StringIO(cli(service, "get-templates", crawl_id, "--csv").stdout)))
    wide = next(r for r in templates if r["template"] == "/products/[id]")
    assert wide["sample_urls"] == f"{service.site_url}products/1; {service.site_url}products/2"
    for command in (("get-report", crawl_id), ("get-site", site_id), ("get-console-summary", site_id)):
        text = cli(service, *command, "--csv").stdout
        for row in csv.reader(io.StringIO(text)):
            assert not any(c.startswith(("{", "[")) for c in row), (command, row)


def test_flatten_joins_lists_and_names_nested_columns() -> None:
    row = {"a": {"b": 1, "c": {"d": None}}, "urls": ["x", "=y"], "found": [{"k": 1, "v": {"w": 2}}], "e": {}}
    assert flatten(row) == {"a.b": 1, "a.c.d": None, "urls": "x; '=y", "found": "k=1, v.w=2"}
    text = csv_records([{"n": 1}, {"n": 2, "more": {"x": "=1+1"}}])
    assert list(csv.reader(io.StringIO(text))) == [["n", "more.x"], ["1", ""], ["2", "'=1+1"]]
    assert csv_records([]) == ""


def test_wait_for_an_audit_or_a_recheck_that_does_not_end_exits_4(service: Service) -> None:
    site_id = str(service.audited_site())
    started = as_json(service, "start-site-audit", site_id, "--max-pages", "3")  # no worker runs it
    waited = cli(service, "wait-for-audit", str(started["crawl_id"]), "--timeout-s", "1")
    assert waited.exit_code == EXIT_STILL_RUNNING == 4
    assert waited.stdout == ""
    assert waited.stderr == (
        f"error: audit {started['crawl_id']} is still queued after 1 s (it keeps running); "
        f"`siteaudit wait-for-audit {started['crawl_id']}` keeps waiting\n"
    )
    scripted = cli(service, "wait-for-audit", str(started["crawl_id"]), "--timeout-s", "1", "--json")
    assert scripted.exit_code == 4 and json.loads(scripted.stdout)["status"] == "queued"
    service.crawl()
    task = next(t["id"] for t in as_json(service, "list-site-tasks", site_id)["tasks"] if t["recheckable"])
    recheck = as_json(service, "request-recheck", site_id, "--task-key", task)["recheck_id"]
    pending = cli(service, "wait-for-recheck", str(recheck), "--timeout-s", "1")
    assert pending.exit_code == 4 and pending.stdout == ""
    assert pending.stderr.startswith(f"error: recheck {recheck} is still queued after 1 s")
    assert len(pending.stderr.splitlines()) == 1
    service.crawl()
    ended = cli(service, "wait-for-recheck", str(recheck), "--timeout-s", "5")
    assert ended.exit_code == 0 and f"Recheck {recheck} ended done" in ended.stdout


def test_a_cancelled_audit_waited_for_exits_1(service: Service) -> None:
    site_id = str(service.audited_site())
    started = as_json(service, "start-site-audit", site_id, "--max-pages", "3")
    assert cli(service, "cancel-audit", str(started["crawl_id"])).exit_code == 0
    waited = cli(service, "wait-for-audit", str(started["crawl_id"]), "--timeout-s", "1")
    assert waited.exit_code == 1 and f"Audit {started['crawl_id']}" in waited.stdout
    assert "ended cancelled" in waited.stdout


# --- the progress bar, on a terminal ---------------------------------------------------------------------

STYLE = re.compile(r"\x1b\[[0-9;]*m")  # colours and bold: removed
MOVES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")  # cursor moves between frames: a line break


def on_a_terminal(args: Sequence[str], env: dict[str, str]) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal; its exit code and what the terminal showed."""
    controller, terminal = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", "from siteaudit.entrypoints.cli import main; main()", *args],
        stdout=subprocess.DEVNULL,
        stderr=terminal,
        env={**os.environ, "COLUMNS": "200", **env},
    )
    os.close(terminal)
    shown = bytearray()

    def read() -> None:
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    code = process.wait(timeout=120)
    reader.join(timeout=10)
    os.close(controller)
    return code, MOVES.sub("\n", STYLE.sub("", shown.decode("utf-8", "replace")))


def bar_frames(shown: str, url: str) -> list[str]:
    return [line for line in shown.splitlines() if url in line and re.search(r"\d+/\d+", line)]


@pytest.mark.timeout(240)
@pytest.mark.paced  # the remote audit runs longer than the CLI's 2 s poll, so a running frame is shown
def test_the_in_process_and_the_remote_audit_show_the_same_progress_bar(service: Service) -> None:
    url = service.site_url
    local = {"SITEAUDIT_ALLOW_NETWORKS": "127.0.0.0/8", "SITEAUDIT_DATABASE_URL": "memory://"}
    code, shown = on_a_terminal(["audit", url, "--max-pages", "10", "--max-rps", "3"], local)
    assert code == 0, shown
    in_process = bar_frames(shown, url)
    assert any(re.search(r"running +" + re.escape(url) + r" .*\d+/10 .*pages/min", f) for f in in_process), (
        shown
    )
    remote = {"SITEAUDIT_URL": service.root, "SITEAUDIT_API_KEY": service.keys.owner}
    with Crawler(service, every_s=0.2):
        code, shown = on_a_terminal(["audit", url, "--max-pages", "10", "--server", service.root], remote)
    assert code == 0, shown
    frames = bar_frames(shown, url)
    assert any(re.search(r"running +" + re.escape(url) + r" .*\d+/10 .*pages/min", f) for f in frames), shown
