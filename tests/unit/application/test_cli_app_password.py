"""`siteaudit admin set-password` and `password-link`: how the first password for the app is set."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from siteaudit.entrypoints.cli import main


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("SITEAUDIT_DATABASE_URL", f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}")
    runner = CliRunner()
    assert runner.invoke(main, ["admin", "create-user", "owner@retro-clock.example"]).exit_code == 0
    return runner


def test_set_password_reads_it_from_stdin_and_refuses_a_short_one(cli: CliRunner) -> None:
    done = cli.invoke(
        main,
        ["admin", "set-password", "owner@retro-clock.example", "--password-stdin"],
        input="correct horse battery staple\n",
    )
    assert done.exit_code == 0, done.output
    assert "password set for owner@retro-clock.example" in done.output
    short = cli.invoke(
        main, ["admin", "set-password", "owner@retro-clock.example", "--password-stdin"], input="short\n"
    )
    assert short.exit_code != 0 and "validation_failed" in short.output


def test_password_link_prints_a_one_time_link_to_the_app(cli: CliRunner) -> None:
    done = cli.invoke(main, ["admin", "password-link", "owner@retro-clock.example"])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("http://127.0.0.1:8080/app/password?token=")
    unknown = cli.invoke(main, ["admin", "password-link", "nobody@retro-clock.example"])
    assert unknown.exit_code != 0 and "not_found" in unknown.output
