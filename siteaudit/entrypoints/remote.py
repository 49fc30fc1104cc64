"""The CLI as a client of a siteaudit service: `siteaudit audit URL --server ...`, `siteaudit mcp`, and one
command per agent tool with the tool's name (`siteaudit list-sites`, `siteaudit verify-site 3`, ...).

The service is `--server` or SITEAUDIT_URL (its root or its `/v1`), the key SITEAUDIT_API_KEY (never a
file of our own). Every remote call goes through the typed HTTP client (`siteaudit.adapters.client`).

Exit codes: 0 done; 1 the audit ended failed or cancelled, or `--fail-on` found issues; 2 a usage error,
a missing setting, or an error the service answered (its code and message are printed); 3 the service
could not be reached; 4 `--wait` gave up before the audit ended (it keeps running).
"""

import json
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, NoReturn, cast

import click

from siteaudit.adapters.client import HttpApplication, Unreachable
from siteaudit.adapters.text import csv_text, json_text, line
from siteaudit.domain.account import Caller
from siteaudit.domain.error import DomainError
from siteaudit.entrypoints.output import echo, error_line

if TYPE_CHECKING:
    from siteaudit.adapters.mcp.tools import ToolSpec
    from siteaudit.ports.application import Application

URL_VARIABLE: Final = "SITEAUDIT_URL"
KEY_VARIABLE: Final = "SITEAUDIT_API_KEY"
EXIT_ENDED_BADLY: Final = 1
EXIT_REFUSED: Final = 2
EXIT_UNREACHABLE: Final = 3
EXIT_STILL_RUNNING: Final = 4


def fail(message: str, code: int = EXIT_REFUSED) -> NoReturn:
    error_line(message)
    sys.exit(code)


def api_base(server: str) -> str:
    """The `/v1` base of a service given by its root or by its `/v1`."""
    base = server.rstrip("/")
    return base if base.endswith("/v1") else base + "/v1"


def connect(server: str | None) -> tuple[HttpApplication, Caller]:
    """The client for `server` (or SITEAUDIT_URL) and the caller of SITEAUDIT_API_KEY."""
    server = server or os.environ.get(URL_VARIABLE, "")
    key = os.environ.get(KEY_VARIABLE, "").strip()
    if not server:
        fail(f"no service given: pass --server URL or set {URL_VARIABLE}")
    if not key:
        fail(
            f"no API key: set {KEY_VARIABLE}=sk_... (a key from the app, or the one `siteaudit serve` printed)"
        )
    application = HttpApplication(api_base(server))
    return application, guarded(lambda: application.authenticate(key))


def guarded(call: Callable[[], Any]) -> Any:
    """`call()`, with an error of the service as one line (code and message) and its exit code."""
    try:
        return call()
    except Unreachable as error:
        fail(error.message, EXIT_UNREACHABLE)
    except DomainError as error:
        code = getattr(error, "code_text", None) or error.code.value
        fields = getattr(error, "fields", None)
        detail = f" ({'; '.join(f'{k}: {v}' for k, v in fields.items())})" if fields else ""
        fail(f"{code}: {error.message}{detail}")


SERVER_HELP: Final = f"The siteaudit service (default {URL_VARIABLE}); the key comes from {KEY_VARIABLE}."
server_option = click.option("--server", default=None, metavar="URL", help=SERVER_HELP)


def as_application(remote: HttpApplication) -> "Application":
    """The client where a door expects the application: the doors here (the tools) call only the
    caller-facing use cases, which the client offers (tests/unit/remote/test_mcp_tools.py checks both)."""
    return cast("Application", remote)


def print_rows(rows: list[dict[str, Any]]) -> None:
    """Rows as CSV on stdout (nested values as JSON), each cell made inert (`siteaudit.adapters.text.cell`:
    no control character, a formula led by a quote) and quoted."""
    if not rows:
        return
    header = list(rows[0])
    cells = ([_flat(row.get(name)) for name in header] for row in rows)
    click.echo(csv_text(header, cells), nl=False)


def _flat(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict | list) else value


# --- one command per agent tool ----------------------------------------------------------------------

_CLICK_TYPES: Final[dict[str, Any]] = {"string": str, "integer": int, "number": float, "boolean": bool}


def _rows(answer: dict[str, Any]) -> list[dict[str, Any]]:
    for name in ("data", "issues", "templates", "tasks"):
        if isinstance(answer.get(name), list):
            return list(answer[name])
    return [answer]


def _terminal_progress(done: float, total: float | None, message: str) -> None:
    if sys.stderr.isatty():
        click.echo(f"\r{line(message)}\x1b[K", err=True, nl=False)


def tool_command(spec: "ToolSpec") -> click.Command:
    """The CLI command of an agent tool: the same name (dashes for underscores), the same arguments (the
    required ones positional), the same answer (`--json`), its summary and rows otherwise."""
    from siteaudit.adapters.mcp.params import read_arguments
    from siteaudit.adapters.mcp.tools import Call
    from siteaudit.adapters.system import SystemClock

    params: list[click.Parameter] = []
    for p in spec.params:
        if p.kind == "urls":  # URLs as arguments (required) or a repeated option
            if p.required:
                params.append(click.Argument([p.name], nargs=-1, required=True))
            else:
                flag = p.name.replace("_", "-")
                params.append(click.Option([f"--{flag}", p.name], multiple=True, help=p.description))
            continue
        kind = click.Choice(p.choices) if p.choices else _CLICK_TYPES[p.kind]
        if p.kind == "boolean":  # a flag pair, required or not
            flag = p.name.replace("_", "-")
            params.append(
                click.Option(
                    [f"--{flag}/--no-{flag}", p.name], default=None, required=p.required, help=p.description
                )
            )
        elif p.required:
            params.append(click.Argument([p.name], type=kind))
        else:
            params.append(
                click.Option(
                    [f"--{p.name.replace('_', '-')}", p.name], type=kind, default=None, help=p.description
                )
            )
    params.append(click.Option(["--server"], default=None, metavar="URL", help=SERVER_HELP))
    params.append(click.Option(["--json", "as_json"], is_flag=True, help="Print the answer as JSON."))
    params.append(click.Option(["--csv", "as_csv"], is_flag=True, help="Print the answer's rows as CSV."))

    def callback(server: str | None, as_json: bool, as_csv: bool, **given: Any) -> None:
        application, caller = connect(server)
        given = {k: list(v) if isinstance(v, tuple) else v for k, v in given.items() if v not in (None, ())}
        args = guarded(lambda: read_arguments(spec.params, given))
        call = Call(
            as_application(application), caller, args, now=SystemClock().now, progress=_terminal_progress
        )
        answer: dict[str, Any] = guarded(lambda: spec.run(call))
        if sys.stderr.isatty() and spec.name in ("wait_for_audit", "wait_for_recheck"):
            click.echo("", err=True)
        if as_json:
            echo(json_text(answer))
        elif as_csv:
            print_rows(_rows(answer))
        else:
            echo(spec.summary(answer))
            if spec.terminal is not None:
                echo(spec.terminal(answer))

    return click.Command(
        spec.name.replace("_", "-"),
        params=params,
        callback=callback,
        help=spec.description,
        short_help=spec.title,
    )


def add_tool_commands(group: click.Group) -> None:
    from siteaudit.adapters.mcp.tools import TOOLS

    for spec in TOOLS:
        group.add_command(tool_command(spec))


# --- siteaudit mcp ---------------------------------------------------------------------------------------


@click.command("mcp")
@server_option
@click.option(
    "--local",
    is_flag=True,
    help="Serve the embedded default in this process (SITEAUDIT_DATABASE_URL, in-process workers) "
    "instead of calling a service.",
)
def mcp(server: str | None, local: bool) -> None:
    """The agent tool server over stdio, for agents that start it as a command. Calls the service at
    --server or SITEAUDIT_URL with SITEAUDIT_API_KEY, or with --local the embedded default in-process."""
    try:
        from siteaudit.adapters.mcp.stdio import serve_stdio
    except ImportError:
        fail("the tool server needs the MCP SDK: pip install 'siteaudit[mcp]'")
    if not local:
        from siteaudit.adapters.system import SystemClock

        application, caller = connect(server)
        serve_stdio(as_application(application), caller, now=SystemClock().now)
        return
    from siteaudit.adapters.log import configure_logging
    from siteaudit.bootstrap import bootstrap
    from siteaudit.entrypoints.worker import start_worker
    from siteaudit.settings import Settings

    try:
        settings = Settings.from_env()
        configure_logging(level=settings.log_level, as_json=settings.log_json)  # on stderr: stdout is MCP's
        app = bootstrap(settings)
    except (ValueError, OSError) as error:
        fail(str(error))
    key = os.environ.get(KEY_VARIABLE, "").strip()
    if not key:
        issued = app.application.ensure_local_owner(
            plan=settings.local_owner_plan, starting_credits=settings.starting_credits
        )
        if issued is None:
            fail(f"set {KEY_VARIABLE} to a key of this database ({settings.database_url})")
        key = issued.raw
        echo(f"created the local owner; its API key, shown once: {key}", err=True)
    caller = guarded(lambda: app.application.authenticate(key))
    worker, periodic = start_worker(app, threads=settings.worker_threads)
    try:
        serve_stdio(app.application, caller, now=app.clock.now)
    finally:
        periodic.stop()
        worker.stop()


# --- siteaudit audit URL --server ----------------------------------------------------------------------


def remote_audit(
    url: str,
    *,
    server: str | None,
    max_pages: int | None,
    max_rps: float | None,
    concurrency: int | None,
    verify_token: str | None,
    wait: bool,
    timeout_s: float,
    as_json: bool,
    as_csv: bool,
    fail_on: str | None,
    poll_s: float = 2.0,
) -> None:
    """Start an audit on the service, show its progress until it ends, then print its report."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from siteaudit.adapters.report_json import report_json
    from siteaudit.domain.audit import AuditRequest, AuditStatus
    from siteaudit.domain.issue import Severity
    from siteaudit.entrypoints.oneshot import EXIT_NO_SCORE, failure_line, no_score_line, print_summary

    application, caller = connect(server)
    request = AuditRequest(
        url=url, max_pages=max_pages, max_rps=max_rps, concurrency=concurrency, verify_token=verify_token
    )
    audit = guarded(lambda: application.start_audit(request, caller)).audit
    if not wait:
        if as_json:
            echo(json_text({"crawl_id": audit.id, "status": audit.status.value}, indent=None))
        else:
            echo(
                f"audit {audit.id} started ({audit.max_pages} pages at most); "
                f"`siteaudit wait-for-audit {audit.id}` waits for it, `siteaudit get-report {audit.id}` reads it"
            )
        return
    deadline = time.monotonic() + timeout_s
    with Progress(
        TextColumn("[bold]{task.fields[status]}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=as_json or as_csv or not sys.stderr.isatty(),
        transient=True,
    ) as bar:
        task = bar.add_task(escape(line(url)), total=audit.max_pages, status="queued", rate="")
        while True:
            detail = guarded(lambda: application.get_audit(audit.id, caller))
            current = detail.audit
            waiting = "waiting in the queue" if current.status is AuditStatus.QUEUED else current.status.value
            started = current.started_at
            rate = ""
            if started is not None and current.pages_crawled:
                elapsed = max(1.0, time.time() - started.timestamp())
                rate = f"{current.pages_crawled / elapsed * 60:.0f} pages/min"
            bar.update(task, completed=current.pages_crawled, status=waiting, rate=rate)
            if current.status.ended:
                break
            if time.monotonic() >= deadline:
                fail(
                    f"audit {audit.id} is still {current.status.value} after {timeout_s:g} s",
                    EXIT_STILL_RUNNING,
                )
            time.sleep(poll_s)
    if current.status is not AuditStatus.DONE:
        fail(f"audit {audit.id} ended {current.status.value}: {current.failure_reason}", EXIT_ENDED_BADLY)
    report = guarded(lambda: application.report(audit.id, caller))
    if as_json:
        echo(json_text(report_json(report)))
    elif as_csv:
        print_rows([r for r in report_json(report)["issues"]])
    else:
        echo(f"audit {audit.id}")
        print_summary(report)
    failed = None if fail_on is None else failure_line(report, Severity(fail_on))
    if failed is not None:
        echo(failed, err=True)
    unscored = no_score_line(report)
    if unscored is not None:
        echo(unscored, err=True)
        sys.exit(EXIT_NO_SCORE)
    if failed is not None:
        sys.exit(EXIT_ENDED_BADLY)
