"""`siteaudit serve` as a user starts it: the local owner's key printed once, the API answering it, and an
audit with a verify token crawled by the in-process workers (the token sealed in the message)."""

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from siteaudit.domain.identity import VERIFY_HEADER
from siteaudit.entrypoints.embedded import LOST_KEY_COMMAND
from tests.local_sites import UNPACED_LOCAL_ENV

PAGE = (
    "<!doctype html><html lang=en><head><title>Retro Clock</title></head><body><h1>Clocks</h1></body></html>"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SITEAUDIT_")}
    env.update(
        SITEAUDIT_DATABASE_URL=f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}",
        SITEAUDIT_ALLOW_NETWORKS="127.0.0.0/8",
        SITEAUDIT_STARTING_CREDITS="500",
        **UNPACED_LOCAL_ENV,  # the audited site on 127.0.0.1 (tests/local_sites.py)
    )
    return env


def serve_command(port: int) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from siteaudit.entrypoints.cli import main; main()",
        "serve",
        "--port",
        str(port),
    ]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The base URL of a `siteaudit serve` process on a fresh SQLite file, and the key it printed."""
    port = free_port()
    env = serve_environment(tmp_path)
    command = serve_command(port)
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("The API is described at"):
                break
        printed = "".join(lines)
        key = re.search(r"^\s+(sk_\S+)$", printed, flags=re.MULTILINE)
        assert key is not None, printed
        assert "A local owner account was created with 500 credits" in printed
        assert "owner@localhost.localdomain, team Local" in printed
        assert "SITEAUDIT_ALLOW_NETWORKS is set (127.0.0.0/8)" in printed  # serve warns once at start
        assert printed.count("SITEAUDIT_ALLOW_NETWORKS is set") == 1
        yield f"http://127.0.0.1:{port}/v1", key.group(1)
    finally:
        process.terminate()
        process.wait(timeout=15)


def call(base: str, key: str, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(
        base + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="GET" if body is None else "POST",
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.loads(answer.read())
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
        except urllib.error.URLError as error:
            if not isinstance(error.reason, ConnectionRefusedError) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_serve_answers_the_printed_key_and_audits_with_its_in_process_workers(
    served: tuple[str, str], httpserver: HTTPServer
) -> None:
    httpserver.expect_request("/").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    httpserver.no_handler_status_code = 404
    base, key = served

    account = call(base, key, "/account")
    assert (account["balance"], account["api_key_prefix"]) == (500, key[:12])

    started = call(
        base, key, "/crawls", {"url": httpserver.url_for("/"), "verify_token": "retro-clock-verify-1"}
    )
    deadline = time.monotonic() + 60
    while call(base, key, f"/crawls/{started['crawl_id']}")["status"] != "done":
        assert time.monotonic() < deadline, "the audit did not finish"
        time.sleep(0.2)
    report = call(base, key, f"/crawls/{started['crawl_id']}/report")
    assert report["totals"]["pages"] == 1
    pages = [request for request, _ in httpserver.log if request.path == "/"]
    assert {r.headers.get(VERIFY_HEADER) for r in pages} == {"retro-clock-verify-1"}


def test_serve_on_a_port_in_use_says_so_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            serve_command(port), env=serve_environment(tmp_path), capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"error: cannot listen on 127.0.0.1:{port}: the port is in use (another siteaudit serve?); "
        "choose another with --port or SITEAUDIT_PORT"
    )
    assert "Traceback" not in done.stderr
    assert "serving" not in done.stdout and "sk_" not in done.stdout


def test_the_key_printed_by_serve_answers_after_the_lost_key_command(
    served: tuple[str, str], tmp_path: Path
) -> None:
    base, lost = served
    assert call(base, lost, "/account")["api_key_prefix"] == lost[:12]
    replaced = subprocess.run(
        [
            sys.executable,
            "-c",
            "from siteaudit.entrypoints.cli import main; main()",
            *LOST_KEY_COMMAND.split()[1:],
        ],
        env=serve_environment(tmp_path),
        capture_output=True,
        text=True,
        check=True,
    )
    key = replaced.stdout.strip()
    assert call(base, key, "/account")["api_key_prefix"] == key[:12]
    with pytest.raises(urllib.error.HTTPError) as refused:
        call(base, lost, "/account")
    assert refused.value.code == 401


def test_a_device_login_started_with_curl_points_at_the_port_serve_listens_on(
    served: tuple[str, str],
) -> None:
    base, _ = served
    started = call(base, "", "/device/start", {"client_name": "connect on tea-kettle.local: codex"})
    origin = base.removesuffix("/v1")
    assert started["verification_uri"] == f"{origin}/app/device"
    with urllib.request.urlopen(started["verification_uri_complete"], timeout=10) as page:
        assert page.url.startswith(f"{origin}/app/sign-in?next=")  # the approval page wants a sign-in


def test_admin_password_link_in_another_shell_points_at_the_port_serve_listens_on(
    served: tuple[str, str], tmp_path: Path
) -> None:
    base, _ = served
    command = [sys.executable, "-c", "from siteaudit.entrypoints.cli import main; main()"]
    linked = subprocess.run(
        [*command, "admin", "password-link", "owner@localhost.localdomain"],
        env=serve_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert linked.stdout.startswith(base.removesuffix("/v1") + "/app/password?token="), linked.stdout
