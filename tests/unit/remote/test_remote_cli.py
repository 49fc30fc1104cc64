"""The CLI against a running service: `siteaudit audit URL --server` waits and prints the report (or JSON,
CSV), the tool-named commands, and errors as one line with a documented exit code, never a traceback."""

import csv
import io
import json
import socket

import pytest
from click.testing import CliRunner, Result

from siteaudit.entrypoints.cli import main
from siteaudit.entrypoints.remote import EXIT_REFUSED, EXIT_STILL_RUNNING, EXIT_UNREACHABLE
from tests.unit.remote.conftest import Crawler, Service


def cli(service: Service, *args: str, key: str | None = None) -> Result:
    runner = CliRunner(env={"SITEAUDIT_URL": service.root, "SITEAUDIT_API_KEY": key or service.keys.owner})
    return runner.invoke(main, list(args))


def test_a_remote_audit_waits_for_the_end_and_prints_the_report(service: Service) -> None:
    with Crawler(service, every_s=0.05):
        result = cli(service, "audit", service.site_url, "--server", service.root, "--max-pages", "10")
    assert result.exit_code == 0, result.output
    assert "Health score" in result.stdout and "Top issues by template" in result.stdout
    assert "Traceback" not in result.output


def test_a_remote_audit_as_json_and_as_csv(service: Service) -> None:
    with Crawler(service, every_s=0.05):
        as_json = cli(service, "audit", service.site_url, "--max-pages", "10", "--json")
        as_csv = cli(service, "audit", service.site_url, "--max-pages", "10", "--csv")
    assert as_json.exit_code == 0, as_json.output
    report = json.loads(as_json.stdout)
    assert 0 <= report["health_score"] <= 100 and report["totals"]["pages"] >= 5
    assert as_csv.exit_code == 0, as_csv.output
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert rows and {"check_code", "severity", "count", "fix"} <= set(rows[0])


def test_no_wait_prints_the_audit_and_how_to_follow_it(service: Service) -> None:
    result = cli(service, "audit", service.site_url, "--max-pages", "5", "--no-wait", "--json")
    assert result.exit_code == 0, result.output
    started = json.loads(result.stdout)
    assert started["status"] == "queued"
    text = cli(service, "audit", service.site_url, "--max-pages", "5", "--no-wait")
    assert f"siteaudit wait-for-audit {started['crawl_id'] + 1}" in text.stdout


def test_a_remote_list_audit_reads_its_urls_from_standard_input(service: Service) -> None:
    urls = f"{service.site_url}\n{service.site_url}gone\n"
    runner = CliRunner(env={"SITEAUDIT_URL": service.root, "SITEAUDIT_API_KEY": service.keys.owner})
    result = runner.invoke(main, ["audit", "--urls", "-", "--no-wait", "--json"], input=urls)
    assert result.exit_code == 0, result.output
    crawl_id = json.loads(result.stdout)["crawl_id"]
    shown = json.loads(cli(service, "get-audit", str(crawl_id), "--json").stdout)
    assert (shown["max_pages"], shown["scope"]["urls"]) == (2, 2)


def test_a_wait_that_gives_up_says_so_with_its_exit_code(service: Service) -> None:
    result = cli(service, "audit", service.site_url, "--max-pages", "5", "--timeout", "0.1")
    assert result.exit_code == EXIT_STILL_RUNNING
    assert "is still queued" in result.stderr


def test_site_commands_have_the_tools_names(service: Service) -> None:
    registered = cli(service, "register-site", service.site_url, "--max-pages", "50", "--json")
    assert registered.exit_code == 0, registered.output
    site_id = json.loads(registered.stdout)["id"]
    listed = cli(service, "list-sites", "--csv")
    assert next(csv.DictReader(io.StringIO(listed.stdout)))["id"] == str(site_id)
    assert "not verified" in cli(service, "get-site", str(site_id)).stdout
    updated = cli(service, "update-site", str(site_id), "--no-alert-email", "--json")
    assert json.loads(updated.stdout)["alert_email"] is False
    verification = cli(service, "get-site-verification", str(site_id), "--json")
    assert json.loads(verification.stdout)["methods"]["file"]["url"].endswith(".txt")
    refused = cli(service, "verify-site", str(site_id), "--method", "file")
    assert refused.exit_code == EXIT_REFUSED
    assert refused.stderr.startswith("error: verification_failed: no ownership method matched")
    assert "Traceback" not in refused.output
    with Crawler(service, every_s=0.05):
        started = json.loads(
            cli(service, "start-site-audit", str(site_id), "--max-pages", "5", "--json").stdout
        )
        waited = cli(service, "wait-for-audit", str(started["crawl_id"]), "--timeout-s", "60")
    assert waited.exit_code == 0 and "is done" in waited.stdout
    prompt = cli(service, "get-fix-prompt", str(started["crawl_id"]))
    assert "# Technical SEO fixes" in prompt.stdout
    assert cli(service, "delete-site", str(site_id)).exit_code == 0
    gone = cli(service, "get-site", str(site_id))
    assert gone.exit_code == EXIT_REFUSED and gone.stderr.startswith("error: not_found: ")


def test_bad_input_and_missing_settings_are_one_line_each(service: Service) -> None:
    invalid = cli(service, "start-audit", "--url", service.site_url, "--max-rps", "50")
    assert invalid.exit_code == EXIT_REFUSED
    assert (
        invalid.stderr.strip()
        == "error: validation_failed: invalid parameters: max_rps (max_rps: must be at most 10)"
    )
    no_key = CliRunner(env={"SITEAUDIT_URL": service.root, "SITEAUDIT_API_KEY": None}).invoke(
        main, ["list-sites"]
    )
    assert no_key.exit_code == EXIT_REFUSED and "SITEAUDIT_API_KEY" in no_key.stderr
    wrong = cli(service, "ping", key="sk_" + "z" * 40)
    assert wrong.exit_code == EXIT_REFUSED and wrong.stderr.startswith("error: unauthenticated: ")


def test_a_service_that_does_not_answer_exits_3() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    runner = CliRunner(
        env={"SITEAUDIT_URL": f"http://127.0.0.1:{port}", "SITEAUDIT_API_KEY": "sk_" + "a" * 40}
    )
    result = runner.invoke(main, ["list-audits"])
    assert result.exit_code == EXIT_UNREACHABLE
    assert result.stderr.startswith(f"error: cannot reach http://127.0.0.1:{port}/v1")


@pytest.mark.parametrize("server", ["http://svc.example", "http://svc.example/", "http://svc.example/v1"])
def test_the_service_is_given_by_its_root_or_its_v1(server: str) -> None:
    from siteaudit.entrypoints.remote import api_base

    assert api_base(server) == "http://svc.example/v1"


def test_indexnow_and_console_commands_have_the_tools_names(service: Service) -> None:
    site_id = str(service.audited_site())
    status = json.loads(cli(service, "get-indexnow-status", site_id, "--json").stdout)
    shown = cli(service, "get-indexnow-status", site_id).stdout
    assert "not verified" in shown and f"Publish {status['key_file_url']} (text/plain)" in shown
    assert f"`siteaudit check-indexnow-key {site_id}`" in shown
    unverified = cli(service, "submit-to-indexnow", site_id, service.site_url)
    assert unverified.exit_code == EXIT_REFUSED
    assert unverified.stderr.startswith("error: indexnow_key_unverified: ")
    service.publish(f"/{status['key']}.txt", status["key"])
    assert "verified" in cli(service, "check-indexnow-key", site_id).stdout
    submitted = cli(
        service, "submit-to-indexnow", site_id, service.site_url + "about", service.site_url, "--json"
    )
    assert submitted.exit_code == 0, submitted.output
    assert json.loads(submitted.stdout)["submitted"] == 2
    assert [r.body["urlList"] for r in service.indexnow.received][-1] == [
        service.site_url + "about",
        service.site_url,
    ]
    assert json.loads(cli(service, "set-indexnow-auto", site_id, "--auto", "--json").stdout)["auto"] is True
    summary = cli(service, "get-console-summary", site_id)
    assert summary.exit_code == 0 and "DEMO DATA" in summary.stdout
    templates = list(
        csv.DictReader(io.StringIO(cli(service, "get-console-summary", site_id, "--csv").stdout))
    )
    assert templates and {"template", "pages", "indexed"} <= set(templates[0])
    inspected = cli(service, "inspect-urls", site_id, service.site_url, "--json")
    assert json.loads(inspected.stdout)["results"][0]["url"] == service.site_url
    outside = cli(service, "get-console-url", site_id, "https://elsewhere.example/")
    assert outside.exit_code == EXIT_REFUSED and outside.stderr.startswith("error: url_not_in_site: ")
    too_many = cli(service, "inspect-urls", site_id, *[service.site_url] * 21)
    assert too_many.exit_code == EXIT_REFUSED and "must be an array of 1 to 20 URLs" in too_many.stderr


def test_task_and_recheck_commands_have_the_tools_names(service: Service) -> None:
    site_id = str(service.audited_site())
    listed = cli(service, "list-site-tasks", site_id, "--limit", "100")
    assert listed.exit_code == 0, listed.output
    assert "open of" in listed.stdout and f"`siteaudit get-task {site_id} " in listed.stdout
    rows = list(csv.DictReader(io.StringIO(cli(service, "list-site-tasks", site_id, "--csv").stdout)))
    assert rows and {"id", "code", "template", "severity", "pages", "impact", "status"} <= set(rows[0])
    found = json.loads(cli(service, "list-site-tasks", site_id, "--limit", "100", "--json").stdout)
    key = next(t["id"] for t in found["tasks"] if t["recheckable"])
    team = json.loads(cli(service, "list-team-tasks", "--limit", "20", "--json").stdout)
    assert {t["site_id"] for t in team["tasks"]} == {int(site_id)}
    task = cli(service, "get-task", site_id, key)
    assert task.exit_code == 0 and f"`siteaudit request-recheck {site_id} --task-key {key}`" in task.stdout
    unknown = cli(service, "get-task", site_id, "0" * 16)
    assert unknown.exit_code == EXIT_REFUSED and unknown.stderr.startswith("error: not_found: ")
    neither = cli(service, "request-recheck", site_id)
    assert neither.exit_code == EXIT_REFUSED
    assert neither.stderr.startswith("error: validation_failed: ") and "task_key" in neither.stderr
    started = json.loads(cli(service, "request-recheck", site_id, "--task-key", key, "--json").stdout)
    assert started["status"] == "queued" and started["tasks"][0]["status"] == "verifying"
    busy = cli(service, "request-recheck", site_id, "--task-key", key)
    assert busy.exit_code == EXIT_REFUSED and busy.stderr.startswith("error: conflict: ")
    service.crawl()
    waited = cli(service, "wait-for-recheck", str(started["recheck_id"]), "--timeout-s", "5")
    assert waited.exit_code == 0 and f"Recheck {started['recheck_id']} ended done" in waited.stdout
    by_url = cli(service, "request-recheck", site_id, "--urls", service.site_url, "--json")
    assert json.loads(by_url.stdout)["urls_total"] == 1
    cancelled = cli(service, "cancel-recheck", str(json.loads(by_url.stdout)["recheck_id"]), "--json")
    assert json.loads(cancelled.stdout)["status"] == "cancelled"
    assert "Traceback" not in busy.output + unknown.output + neither.output
