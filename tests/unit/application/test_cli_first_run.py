"""The first hour with the CLI: the production walkthrough of docs/operations.md in its order, the admin
listings, `migrate` saying what it did, startup errors as one line, the local owner's lost key, and the
loopback refusal naming its way out."""

import logging
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.sql import migrate
from siteaudit.adapters.sql.migration import head_revision
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.error import DomainError, ErrorCode, Unauthenticated
from siteaudit.domain.ids import AuditId
from siteaudit.entrypoints.cli import main
from siteaudit.entrypoints.embedded import KEY_VARIABLE, LOST_KEY_COMMAND, greeting
from siteaudit.services.audits.usecases import GetAudit, StartAudit
from siteaudit.services.sites.usecases import CrawlSite, RegisterSite
from siteaudit.settings import Settings

ALICE = "alice@retro-clock.example"
PUBLIC = StaticResolver({"retro-clock.example": ["93.184.215.14"]})


@pytest.fixture(autouse=True)
def logging_left_to_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve` and `worker` configure the process's logging; here pytest keeps its own handlers."""
    monkeypatch.setattr("siteaudit.adapters.log.configure_logging", lambda **_: None)


@pytest.fixture
def database(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"


@pytest.fixture
def cli(database: str) -> CliRunner:
    return CliRunner(env={"SITEAUDIT_DATABASE_URL": database, "SITEAUDIT_ALLOW_NETWORKS": None})


def run(cli: CliRunner, *args: str) -> Result:
    return cli.invoke(main, list(args), catch_exceptions=False)


def ok(cli: CliRunner, *args: str) -> str:
    result = run(cli, *args)
    assert result.exit_code == 0, result.output
    return result.output


def application_on(database: str) -> App:
    return bootstrap(Settings(database_url=database), queue=MemoryTaskQueue(), resolver=PUBLIC)


def production_walkthrough() -> list[list[str]]:
    """The `siteaudit admin ...` lines of the production walkthrough in docs/operations.md, in its order."""
    operations = (Path(__file__).resolve().parents[3] / "docs" / "operations.md").read_text()
    section = operations.split("### From an empty database to the first audit", 1)[1].split("\n## ", 1)[0]
    return [
        shlex.split(line.split("#")[0])[1:]
        for line in section.splitlines()
        if line.startswith("siteaudit admin")
    ]


def test_the_production_walkthrough_in_its_order_reaches_a_first_audit(cli: CliRunner, database: str) -> None:
    commands = production_walkthrough()
    assert [c[:2] for c in commands] == [
        ["admin", "create-user"],
        ["admin", "create-team"],
        ["admin", "grant-credits"],
        ["admin", "create-key"],
    ]
    printed = [ok(cli, *command) for command in commands]
    key = printed[-1].strip()
    assert re.fullmatch(r"sk_\w{40}", key)

    app = application_on(database)
    caller = app.application.authenticate(key)
    started = app.application.handle(StartAudit(url="https://retro-clock.example/", max_pages=100), caller)
    assert app.application.handle(GetAudit(AuditId(started.crawl_id)), caller).status is AuditStatus.QUEUED
    assert started.estimated_credits == 100
    # The credits granted also cover an audit of a site registered with defaults (its page cap, 10,000).
    site = app.application.handle(RegisterSite("https://retro-clock.example/"), caller)
    app.application.verify_site_by_hand(site.id, "the production walkthrough")
    site_audit = app.application.handle(CrawlSite(site_id=site.id), caller)
    assert site_audit.estimated_credits == 10_000  # credits, as every door shows them


def test_the_order_matters_a_key_needs_the_team_and_an_audit_needs_credits(
    cli: CliRunner, database: str
) -> None:
    ok(cli, "admin", "create-user", ALICE)
    refused = run(cli, "admin", "create-key", ALICE, "--team", "Retro Clock")
    assert (refused.exit_code, refused.output) == (2, "error: not_found: team Retro Clock was not found\n")
    ok(cli, "admin", "create-team", "Retro Clock", "--owner", ALICE)
    key = ok(cli, "admin", "create-key", ALICE, "--team", "Retro Clock").strip()
    app = application_on(database)
    with pytest.raises(DomainError) as refusal:
        app.application.handle(
            StartAudit(url="https://retro-clock.example/"), app.application.authenticate(key)
        )
    assert refusal.value.code is ErrorCode.INSUFFICIENT_CREDITS


def test_create_user_shows_its_plans_and_default_and_refuses_others(cli: CliRunner) -> None:
    assert "--plan [free|starter|growth|scale]" in ok(cli, "admin", "create-user", "--help")
    assert "[default: free]" in ok(cli, "admin", "create-user", "--help")
    refused = run(cli, "admin", "create-user", ALICE, "--plan", "platinum")
    assert refused.exit_code == 2
    assert "'platinum' is not one of 'free', 'starter', 'growth', 'scale'" in refused.output
    assert "'platinum' is not one of" in run(cli, "admin", "set-plan", ALICE, "platinum").output


def test_list_users_list_teams_and_whoami(cli: CliRunner) -> None:
    assert ok(cli, "admin", "list-users") == "no users\n"
    assert ok(cli, "admin", "list-teams") == "no teams\n"
    ok(cli, "admin", "create-user", ALICE, "--plan", "starter")
    ok(cli, "admin", "create-user", "bob@retro-clock.example")
    ok(cli, "admin", "create-team", "Retro Clock", "--owner", ALICE)
    ok(cli, "admin", "add-member", "Retro Clock", "bob@retro-clock.example")
    ok(cli, "admin", "grant-credits", ALICE, "250")
    key = ok(cli, "admin", "create-key", "bob@retro-clock.example", "--team", "Retro Clock").strip()

    assert ok(cli, "admin", "list-users").splitlines() == [
        f"   1  {ALICE}  starter  250 credits  teams: Retro Clock",
        "   2  bob@retro-clock.example  free  0 credits  teams: Retro Clock",
    ]
    assert ok(cli, "admin", "list-teams") == (f"   1  Retro Clock  owner {ALICE} (250 credits)  2 members\n")
    users = run(cli, "admin", "list-users", "--json")
    assert '"teams": [\n        "Retro Clock"\n      ]' in users.output
    assert ok(cli, "admin", "list-users", "--csv").splitlines() == [
        '"id","email","plan","balance","teams"',
        f'"1","{ALICE}","starter","250","Retro Clock"',
        '"2","bob@retro-clock.example","free","0","Retro Clock"',
    ]
    assert ok(cli, "admin", "list-teams", "--csv").splitlines()[1] == f'"1","Retro Clock","{ALICE}","250","2"'
    assert ok(cli, "admin", "list-keys", "bob@retro-clock.example", "--csv").startswith(
        '"prefix","team_id","label","created_at","last_used_at","status"\n"sk_'
    )

    for given in (key, key[:12], key[:7]):
        assert ok(cli, "admin", "whoami", given) == (
            f"{key[:12]}: settings key of bob@retro-clock.example for team Retro Clock, active, last used never\n"
        )
    unknown = run(cli, "admin", "whoami", "sk_0000000000")
    assert (unknown.exit_code, unknown.output) == (
        2,
        "error: not_found: API key sk_000000000 was not found\n",
    )
    short = run(cli, "admin", "whoami", "sk_")
    assert short.output == "error: validation_failed: give the key or at least its first 7 characters\n"


def test_migrate_says_what_it_did(cli: CliRunner, database: str, tmp_path: Path) -> None:
    head = head_revision()
    assert ok(cli, "migrate") == f"created the schema at revision {head}\n"
    assert ok(cli, "migrate") == f"nothing to do: the schema is already at revision {head}\n"

    older = f"sqlite:///{tmp_path / 'older.sqlite3'}"
    assert migrate(older, "0004").after == "0004"
    upgraded = run(CliRunner(env={"SITEAUDIT_DATABASE_URL": older}), "migrate")
    assert upgraded.output == f"upgraded the schema from revision 0004 to {head}\n"


@pytest.mark.parametrize(
    "command",
    [
        ["admin", "list-users"],
        ["admin", "create-key", ALICE, "--team", "Retro Clock"],
        ["archive", "--keep-last", "1"],
        ["audit", "https://retro-clock.example/"],
        ["serve", "--port", "0"],
        ["worker"],
    ],
)
def test_an_unreadable_ca_bundle_is_one_error_line_in_every_command(
    cli: CliRunner, tmp_path: Path, command: list[str]
) -> None:
    env = {
        "SITEAUDIT_CA_BUNDLE": str(tmp_path / "missing.pem"),
        "SITEAUDIT_BROKER_URL": "amqp://127.0.0.1:1/",
    }
    result = cli.invoke(main, command, env=env)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("error: SITEAUDIT_CA_BUNDLE=")
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output


@pytest.mark.parametrize("command", [["admin", "list-users"], ["serve"], ["archive", "--keep-last", "1"]])
def test_a_missing_secret_key_is_one_error_line(command: list[str]) -> None:
    cli = CliRunner(
        env={
            "SITEAUDIT_DATABASE_URL": "postgresql+psycopg://nobody@127.0.0.1:1/none",
            "SITEAUDIT_SECRET_KEY": None,
        }
    )
    result = cli.invoke(main, command)
    assert (result.exit_code, result.stderr) == (
        2,
        "error: SITEAUDIT_SECRET_KEY must be set when the database is not a local SQLite file\n",
    )


def test_admin_commands_do_not_warn_about_allowed_networks(
    database: str, caplog: pytest.LogCaptureFixture
) -> None:
    cli = CliRunner(env={"SITEAUDIT_DATABASE_URL": database, "SITEAUDIT_ALLOW_NETWORKS": "127.0.0.0/8"})
    with caplog.at_level(logging.DEBUG):
        ok(cli, "admin", "create-user", ALICE)
        ok(cli, "admin", "list-users")
    assert not [r for r in caplog.records if "ALLOW_NETWORKS" in r.getMessage() and r.levelno >= logging.INFO]


def test_a_loopback_start_url_is_refused_naming_the_development_setting() -> None:
    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue())
    caller = app.application.authenticate(
        app.application.ensure_local_owner(plan="scale", starting_credits=10).raw
    )  # type: ignore[union-attr]
    with pytest.raises(DomainError) as refused:
        app.application.handle(StartAudit(url="http://127.0.0.1:8000/"), caller)
    assert refused.value.code is ErrorCode.INVALID_URL
    assert "its host resolves to a non-public address (127.0.0.0/8)" in refused.value.message
    assert "set SITEAUDIT_ALLOW_NETWORKS=127.0.0.0/8 (development only" in refused.value.message


def test_a_loopback_webhook_url_is_still_accepted_at_start() -> None:
    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue(), resolver=PUBLIC)
    caller = app.application.authenticate(
        app.application.ensure_local_owner(plan="scale", starting_credits=10).raw
    )  # type: ignore[union-attr]
    request = StartAudit(
        url="https://retro-clock.example/", max_pages=5, webhook_url="https://127.0.0.1:9/hook"
    )
    started = app.application.handle(request, caller)
    with app.uow() as uow:
        assert uow.audits.get_any(AuditId(started.crawl_id)).webhook_url == "https://127.0.0.1:9/hook"


def test_the_greeting_names_the_owner_and_its_curl_lines_work_when_pasted(database: str) -> None:
    app = application_on(database)
    issued = app.application.ensure_local_owner(plan="scale", starting_credits=app.settings.starting_credits)
    assert issued is not None
    text = greeting(app, "http://127.0.0.1:8080/v1", issued)
    assert (
        "A local owner account was created with 10,000 credits: owner@localhost.localdomain, team Local"
        in text
    )
    assert f"\n    {issued.raw}\n" in text
    assert "'$" not in text  # nothing single-quoted that should expand

    pasted = [line.strip() for line in text.splitlines() if line.strip().startswith(("export ", "curl "))]
    assert pasted[0] == f"export {KEY_VARIABLE}={issued.raw}"
    bash = shutil.which("bash")
    assert bash is not None
    script = "curl() { printf '%s\\n' \"$@\"; echo ---; }\n" + "\n".join(pasted)
    argv = subprocess.run([bash, "-c", script], capture_output=True, text=True, check=True, env={}).stdout
    assert argv.count(f"Authorization: Bearer {issued.raw}\n") == 3
    assert '{"url": "https://example.com/", "max_pages": 50}\n' in argv

    restarted = greeting(app, "http://127.0.0.1:8080/v1", None)
    assert f"with your key in {KEY_VARIABLE}" in restarted and issued.raw not in restarted
    assert f"`{LOST_KEY_COMMAND}`" in restarted


def test_the_lost_local_key_is_replaced_by_the_documented_command(cli: CliRunner, database: str) -> None:
    app = application_on(database)
    lost = app.application.ensure_local_owner(plan="scale", starting_credits=500)
    assert lost is not None
    root = Path(__file__).resolve().parents[3]
    for page in ("README.md", "docs/getting-started.md"):
        assert LOST_KEY_COMMAND in (root / page).read_text(), page

    new_key = ok(cli, *shlex.split(LOST_KEY_COMMAND)[1:]).strip()
    assert app.application.authenticate(new_key).key_prefix == new_key[:12]
    with pytest.raises(Unauthenticated):
        app.application.authenticate(lost.raw)
