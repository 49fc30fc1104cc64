"""The CLI doors: admin commands, `archive` and the one-shot `audit`, each through the application."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from pytest_httpserver import HTTPServer

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.entrypoints.cli import main
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL_ENV

OWNER = "owner@retro-clock.example"
MEMBER = "member@retro-clock.example"
PAGE = (
    "<!doctype html><html lang=en><head><meta charset=utf-8><title>Retro Clock</title></head>"
    "<body><h1>Clocks</h1><a href='/about'>About</a></body></html>"
)


@pytest.fixture
def cli(tmp_path: Path) -> CliRunner:
    return CliRunner(env={"SITEAUDIT_DATABASE_URL": f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"})


def run(cli: CliRunner, *args: str) -> Result:
    return cli.invoke(main, list(args), catch_exceptions=False)


def as_json(cli: CliRunner, *args: str) -> dict[str, object]:
    result = run(cli, *args, "--json")
    assert result.exit_code == 0, result.output
    answer: dict[str, object] = json.loads(result.output)
    return answer


def test_the_admin_commands_manage_people_teams_credits_and_keys(cli: CliRunner) -> None:
    assert as_json(cli, "admin", "create-user", OWNER, "--plan", "growth") == {
        "id": 1,
        "email": OWNER,
        "plan": "growth",
    }
    assert as_json(cli, "admin", "create-team", "Retro Clock", "--owner", OWNER) == {
        "id": 1,
        "name": "Retro Clock",
        "owner_id": 1,
    }
    assert run(cli, "admin", "create-user", MEMBER).output == f"created user 2 {MEMBER}\n"
    assert (
        run(cli, "admin", "add-member", "Retro Clock", MEMBER).output
        == f"{MEMBER} is a member of Retro Clock\n"
    )
    assert as_json(cli, "admin", "set-plan", MEMBER, "starter") == {"email": MEMBER, "plan": "starter"}
    assert as_json(cli, "admin", "grant-credits", OWNER, "12.5", "--key", "grant-1") == {
        "email": OWNER,
        "balance": 12.5,
    }
    assert as_json(cli, "admin", "grant-credits", OWNER, "12.5", "--key", "grant-1")["balance"] == 12.5
    assert as_json(cli, "admin", "grant-credits", OWNER, "1")["balance"] == 13.5

    first = as_json(cli, "admin", "create-key", OWNER, "--team", "Retro Clock")
    assert str(first["api_key"]).startswith("sk_") and str(first["api_key"]).startswith(str(first["prefix"]))
    again = run(cli, "admin", "create-key", OWNER, "--team", "Retro Clock")
    assert (again.exit_code, again.output.split(":")[:2]) == (2, ["error", " conflict"])
    second = as_json(cli, "admin", "rotate-key", OWNER, "--team", "Retro Clock")
    keys = as_json(cli, "admin", "list-keys", OWNER)["keys"]
    assert isinstance(keys, list)
    assert {(k["prefix"], k["status"]) for k in keys} == {
        (first["prefix"], "revoked"),
        (second["prefix"], "active"),
    }
    assert as_json(cli, "admin", "revoke-key", OWNER, str(second["prefix"])) == {
        "prefix": second["prefix"],
        "status": "revoked",
    }
    assert run(cli, "admin", "revoke-key", OWNER, str(second["prefix"])).exit_code == 2

    secret = as_json(cli, "admin", "webhook-secret", OWNER)
    assert str(secret["webhook_secret"]).startswith("whsec_") and secret["rotated"] is False
    rotated = as_json(cli, "admin", "webhook-secret", OWNER, "--rotate")
    assert rotated["webhook_secret"] != secret["webhook_secret"]
    assert run(cli, "admin", "webhook-secret", OWNER).output.strip() == rotated["webhook_secret"]

    assert as_json(cli, "admin", "remove-member", "Retro Clock", MEMBER)["removed"] is True
    refused = run(cli, "admin", "remove-member", "Retro Clock", OWNER)
    assert (refused.exit_code, refused.output.split(":")[:2]) == (2, ["error", " conflict"])


def test_an_unknown_plan_is_refused(cli: CliRunner) -> None:
    result = run(cli, "admin", "create-user", OWNER, "--plan", "platinum")
    assert result.exit_code == 2
    assert "Invalid value for '--plan': 'platinum' is not one of 'free', 'starter'" in result.output
    application = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue()).application
    with pytest.raises(DomainError, match=r"^unknown plan 'platinum'; plans: free, starter") as refused:
        application.create_user(OWNER, plan="platinum")
    assert refused.value.code is ErrorCode.VALIDATION_FAILED


def test_archive_needs_a_selection_and_archives_nothing_young(cli: CliRunner) -> None:
    refused = run(cli, "archive")
    assert refused.exit_code == 2
    assert "give --older-than-days or --keep-last" in refused.output
    assert as_json(cli, "archive", "--older-than-days", "0") == {"archived": []}
    assert run(cli, "archive", "--keep-last", "3").output == "archived 0 audits\n"


def test_the_one_shot_audit_prints_the_report(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    httpserver.expect_request("/about").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    httpserver.no_handler_status_code = 404
    cli = CliRunner(
        env={"SITEAUDIT_ALLOW_NETWORKS": "127.0.0.0/8", "SITEAUDIT_DATABASE_URL": None, **UNPACED_LOCAL_ENV}
    )

    report = json.loads(run(cli, "audit", httpserver.url_for("/"), "--max-rps", "3", "--json").output)
    assert report["totals"]["pages"] == 2
    assert report["issue_counts"]["warning"] > 0

    summary = run(cli, "audit", httpserver.url_for("/"), "--max-rps", "3", "--fail-on", "warning")
    assert summary.exit_code == 1
    assert summary.output.startswith(f"Health score {report['health_score']}/100")
    assert "2 pages: 2 ok" in summary.output


def test_the_one_shot_audit_reports_a_refused_url(httpserver: HTTPServer) -> None:
    cli = CliRunner(env={"SITEAUDIT_ALLOW_NETWORKS": None, "SITEAUDIT_DATABASE_URL": None})
    result = run(cli, "audit", httpserver.url_for("/"))
    assert result.exit_code == 2
    assert result.output.startswith("error: invalid_url")


def a_shop(httpserver: HTTPServer) -> CliRunner:
    """A site whose home links to /about and /other, and whose sitemap lists /other only."""
    home = PAGE.replace("</body>", "<a href='/other'>Other</a></body>")
    for path, body in (("/", home), ("/about", PAGE), ("/other", PAGE)):
        httpserver.expect_request(path).respond_with_data(body, content_type="text/html; charset=utf-8")
    sitemap = (
        '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{httpserver.url_for('/other')}</loc></url></urlset>"
    )
    httpserver.expect_request("/sitemap.xml").respond_with_data(sitemap, content_type="application/xml")
    httpserver.no_handler_status_code = 404
    return CliRunner(env={"SITEAUDIT_ALLOW_NETWORKS": "127.0.0.0/8", "SITEAUDIT_DATABASE_URL": None})


def fetched_pages(httpserver: HTTPServer) -> set[str]:
    host_files = {"/robots.txt", "/llms.txt", "/sitemap.xml", "/sitemap_index.xml"}
    return {request.path for request, _ in httpserver.log} - host_files


def test_the_one_shot_audit_audits_exactly_the_urls_of_a_file(httpserver: HTTPServer, tmp_path: Path) -> None:
    cli = a_shop(httpserver)
    listed = tmp_path / "urls.txt"
    listed.write_text(f"{httpserver.url_for('/')}\n\n  {httpserver.url_for('/about')}  \n")
    report = json.loads(run(cli, "audit", "--urls", str(listed), "--max-rps", "3", "--json").output)
    assert report["totals"]["pages"] == 2
    assert fetched_pages(httpserver) == {"/", "/about"}  # nothing followed: /other is linked, not listed


def test_the_one_shot_audit_reads_its_urls_from_standard_input(httpserver: HTTPServer) -> None:
    cli = a_shop(httpserver)
    given = f"{httpserver.url_for('/other')}\n"
    result = cli.invoke(main, ["audit", "--urls", "-", "--max-rps", "3", "--json"], input=given)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["totals"]["pages"] == 1
    assert fetched_pages(httpserver) == {"/other"}


def test_the_one_shot_audit_of_the_sitemaps_only(httpserver: HTTPServer) -> None:
    cli = a_shop(httpserver)
    result = run(cli, "audit", httpserver.url_for("/"), "--sitemap-only", "--max-rps", "3", "--json")
    assert json.loads(result.output)["totals"]["pages"] == 1
    assert fetched_pages(httpserver) == {"/other"}


def test_the_one_shot_audit_names_what_is_wrong_with_its_urls(httpserver: HTTPServer, tmp_path: Path) -> None:
    cli = a_shop(httpserver)
    neither, both = run(cli, "audit"), run(cli, "audit", httpserver.url_for("/"), "--urls", "-")
    assert neither.exit_code == both.exit_code == 2
    assert "give URL or --urls FILE" in neither.output and "give URL or --urls FILE" in both.output
    empty = cli.invoke(main, ["audit", "--urls", "-"], input="\n\n")
    assert empty.exit_code == 2 and "the --urls file lists no URL" in empty.output
    elsewhere = tmp_path / "urls.txt"
    elsewhere.write_text(f"{httpserver.url_for('/')}\nhttps://elsewhere.example/\n")
    refused = run(cli, "audit", "--urls", str(elsewhere))
    assert refused.exit_code == 2
    assert refused.output.startswith("error: validation_failed") and "urls[1]" in refused.output
    assert fetched_pages(httpserver) == set()
