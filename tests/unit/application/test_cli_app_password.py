"""`siteaudit admin set-password` and `password-link`: how the first password for the app is set."""

import socket
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


def test_password_link_points_at_the_running_serve_or_the_public_url(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from siteaudit.entrypoints.embedded import running_origin, serving_note
    from siteaudit.settings import Settings

    settings = Settings(database_url=f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}")
    note = serving_note(settings)
    assert note == tmp_path / "siteaudit.sqlite3.serving" and running_origin(settings) is None
    with socket.socket() as listening:  # as `siteaudit serve --port N` leaves it while it runs
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        note.write_text(f"http://127.0.0.1:{port}\n")
        assert running_origin(settings) == f"http://127.0.0.1:{port}"
        done = cli.invoke(main, ["admin", "password-link", "owner@retro-clock.example"])
        assert done.exit_code == 0, done.output
        assert done.output.startswith(f"http://127.0.0.1:{port}/app/password?token="), done.output
        monkeypatch.setenv("SITEAUDIT_PUBLIC_URL", "https://audit.retro-clock.example")
        public = cli.invoke(main, ["admin", "password-link", "owner@retro-clock.example"])
        assert public.output.startswith("https://audit.retro-clock.example/app/password?token="), (
            public.output
        )
        monkeypatch.delenv("SITEAUDIT_PUBLIC_URL")
    assert running_origin(settings) is None  # nothing listens there any more: a killed serve's note
    stale = cli.invoke(main, ["admin", "password-link", "owner@retro-clock.example"])
    assert stale.output.startswith("http://127.0.0.1:8080/app/password?token="), stale.output
    note.write_text("javascript:alert(1)")  # anything but an http(s) address is not used
    assert running_origin(settings) is None
    assert serving_note(Settings(database_url="memory://")) is None
