"""A setting that stops the start is one `error: ...` line and a non-zero exit in every command that reads
the settings, and one logged line (no traceback) when gunicorn loads the WSGI factory (docs/cli.md "Settings that stop the start").
Each command runs as a user runs it: in a subprocess."""

import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path

import click
import pytest

from siteaudit.entrypoints.cli import admin

# A PostgreSQL database that does not exist, and no SITEAUDIT_SECRET_KEY: bootstrap refuses the missing key,
# `migrate` (which needs no key) cannot open the database.
NO_SECRET_KEY = {
    "SITEAUDIT_DATABASE_URL": f"postgresql://postgres@127.0.0.1:5432/none_{secrets.token_hex(4)}"
}


def arguments(command: click.Command) -> list[str]:
    """Arguments click accepts for `command`: a value of each argument's type, each required option."""
    given: list[str] = []
    for param in command.params:
        if isinstance(param, click.Option) and (param.required or param.name == "password_stdin"):
            given += (
                [param.opts[0]]
                if param.is_flag
                else [param.opts[0], "-" if isinstance(param.type, click.File) else "x"]
            )
        elif isinstance(param, click.Argument):
            if isinstance(param.type, click.Choice):
                given.append(str(param.type.choices[0]))
            elif isinstance(param.type, click.types._NumberParamTypeBase):
                given.append("1")
            else:
                given.append("someone@example.com")
    return given


ADMIN = [["admin", name, *arguments(command)] for name, command in sorted(admin.commands.items())]
COMMANDS = [
    ["serve"],
    ["migrate"],
    ["worker"],
    ["scheduler"],
    ["archive", "--keep-last", "1"],
    ["mcp", "--local"],
    *ADMIN,
]


def environment(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SITEAUDIT_")}
    return {**env, "SITEAUDIT_BROKER_URL": "amqp://guest:guest@127.0.0.1:5672/", **settings}


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from siteaudit.entrypoints.cli import main; main()", *args]
    return subprocess.run(
        command, env=env, input="a long enough password\n", capture_output=True, text=True, timeout=120
    )


def assert_one_error_line(result: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert result.returncode != 0, result
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert all(part in lines[0] for part in expected), lines[0]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(args[:2]) for args in COMMANDS])
def test_no_secret_key_with_postgresql_is_one_error_line(args: list[str]) -> None:
    result = run(args, environment(**NO_SECRET_KEY))
    assert_one_error_line(result, "SITEAUDIT_")


@pytest.mark.parametrize("args", [["serve"], ["migrate"], ["worker"], ["scheduler"], ["admin", "list-users"]])
@pytest.mark.parametrize(
    ("setting", "value"),
    [("SITEAUDIT_LOG_LEVEL", "loud"), ("SITEAUDIT_PORT", "eighty"), ("SITEAUDIT_HOST_LIMITS", "x=y")],
)
def test_a_malformed_setting_is_one_error_line_naming_it(
    args: list[str], setting: str, value: str, tmp_path: Path
) -> None:
    env = environment(SITEAUDIT_DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", **{setting: value})
    assert_one_error_line(run(args, env), setting)


def test_an_unreadable_ca_bundle_stops_the_one_shot_audit(tmp_path: Path) -> None:
    env = environment(SITEAUDIT_CA_BUNDLE=str(tmp_path / "missing.pem"))
    assert_one_error_line(run(["audit", "https://example.com/"], env))


def test_gunicorn_logs_one_line_and_stops_without_a_traceback(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    gunicorn = Path(sys.executable).with_name("gunicorn")
    command = [
        str(gunicorn),
        "--no-control-socket",
        "--bind",
        f"127.0.0.1:{port}",
        "siteaudit.entrypoints.wsgi:create_app()",
    ]
    result = subprocess.run(
        command, env=environment(**NO_SECRET_KEY), cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    ours = [line for line in result.stderr.splitlines() if "SITEAUDIT_SECRET_KEY" in line]
    assert len(ours) == 1 and "cannot start: SITEAUDIT_SECRET_KEY must be set" in ours[0], result.stderr
    assert "App failed to load" in result.stderr
