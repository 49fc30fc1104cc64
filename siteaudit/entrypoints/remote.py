"""The CLI as a client of a siteaudit service: `siteaudit audit URL --server ...`, `siteaudit mcp`, and one
command per agent tool with the tool's name (`siteaudit list-sites`, `siteaudit verify-site 3`, ...).

The service is `--server` or SITEAUDIT_URL (its root or its `/v1`), the key SITEAUDIT_API_KEY (never a
file of our own). Every remote call goes through the typed HTTP client (`siteaudit.adapters.client`).

Exit codes: 0 done; 1 the audit (or the recheck a `wait-for-recheck` waited for) ended failed or
cancelled, or `--fail-on` found issues; 2 a usage error, a missing setting, or an error the service
answered (its code and message are printed); 3 the service could not be reached; 4 `--wait`,
`wait-for-audit` or `wait-for-recheck` gave up before the end (it keeps running).
"""

import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, NoReturn

import click
from attrs import evolve

from siteaudit.adapters.client import HttpApplication, Unreachable
from siteaudit.adapters.text import csv_records, json_text
from siteaudit.domain.account import Caller
from siteaudit.domain.error import DomainError
from siteaudit.entrypoints.output import ProgressBar, echo, error_line, print_table

if TYPE_CHECKING:
    from siteaudit.adapters.mcp.spec import ToolSpec
    from siteaudit.entrypoints.oneshot import AuditOptions

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
    from siteaudit.bootstrap import USE_CASES

    application = HttpApplication(api_base(server), use_cases=USE_CASES)
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


def print_rows(rows: list[dict[str, Any]]) -> None:
    """Rows as CSV on stdout: nested values flattened to columns (`totals.pages`, a list's items joined by
    `; `, never JSON), each cell made inert (`siteaudit.adapters.text.cell`: no control character, a
    formula led by a quote) and quoted."""
    click.echo(csv_records(rows), nl=False)


def show(parts: list[tuple[str, Any]]) -> None:
    """What `remote_views.render` made: lines of text and tables, for people."""
    for kind, part in parts:
        if kind == "table":
            print_table(*part)
        else:
            echo(part)


# --- one command per agent tool ----------------------------------------------------------------------

_CLICK_TYPES: Final[dict[str, Any]] = {"string": str, "integer": int, "number": float, "boolean": bool}

# The commands that wait: what they wait for, and the answer's field naming it.
WAITS: Final[dict[str, tuple[str, str]]] = {
    "wait_for_audit": ("audit", "crawl_id"),
    "wait_for_recheck": ("recheck", "recheck_id"),
}
ENDED_BADLY: Final = ("failed", "cancelled")


def _after_wait(spec_name: str, answer: dict[str, Any], timeout_s: float) -> None:
    """Exit 4 (one line) when the wait gave up before the end, 1 when it ended failed or cancelled."""
    noun, field = WAITS[spec_name]
    status, ident = answer["status"], answer[field]
    if status in ENDED_BADLY:
        sys.exit(EXIT_ENDED_BADLY)
    if status != "done":
        fail(
            f"{noun} {ident} is still {status} after {timeout_s:g} s (it keeps running); "
            f"`siteaudit wait-for-{noun} {ident}` keeps waiting",
            EXIT_STILL_RUNNING,
        )


def tool_command(spec: "ToolSpec") -> click.Command:
    """The CLI command of an agent tool: the same name (dashes for underscores), the same arguments (the
    required ones positional), the same answer (`--json`), its rows as CSV (`--csv`), and for people its
    lines, tables and the next `siteaudit` command to run (`remote_views.VIEWS`)."""
    from siteaudit.adapters.mcp.params import read_arguments
    from siteaudit.adapters.mcp.spec import Call
    from siteaudit.adapters.mcp.tools import tool_specs
    from siteaudit.adapters.system import SystemClock
    from siteaudit.bootstrap import USE_CASES
    from siteaudit.entrypoints.remote_views import VIEWS, Invocation, render

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
    params.append(
        click.Option(
            ["--csv", "as_csv"],
            is_flag=True,
            help="Print the answer's rows as CSV (nested values as dotted columns, lists joined by '; ').",
        )
    )
    view = VIEWS[spec.name]
    positional = tuple(p.name for p in spec.params if p.required)

    def callback(server: str | None, as_json: bool, as_csv: bool, **given: Any) -> None:
        application, caller = connect(server)
        given = {k: list(v) if isinstance(v, tuple) else v for k, v in given.items() if v not in (None, ())}
        args = guarded(lambda: read_arguments(spec.params, given))
        waits = WAITS.get(spec.name)
        what = "" if waits is None else f"{waits[0]} {given.get(waits[1], '')}"
        shown = waits is not None and ProgressBar.shown_on_terminal(quiet=as_json or as_csv)
        with ProgressBar(what, total=None, shown=shown) as bar:
            call = Call(
                application,
                caller,
                args,
                now=SystemClock().now,
                progress=lambda done, total, message: bar.update(
                    done, total=total, status=message, per_minute=0.0
                ),
            )
            answer: dict[str, Any] = guarded(lambda: spec.run(call))
        timed_out = waits is not None and answer["status"] not in ("done", *ENDED_BADLY)
        if as_json:
            echo(json_text(answer))
        elif as_csv:
            print_rows(view.csv_rows(answer))
        elif not timed_out:
            invocation = Invocation(spec.name.replace("_", "-"), positional, given)
            parts = render(view, answer, invocation)
            if view.also and not answer.get("verified", True):
                # The tool shown too may be declared (`get_site_verification`): looked up among all.
                also = next(tool for tool in tool_specs(USE_CASES) if tool.name == view.also)
                more = guarded(lambda: also.run(evolve(call, args={"site_id": answer["id"]})))
                site = Invocation(also.name, ("site_id",), {"site_id": answer["id"]})
                proofs = render(VIEWS[view.also], more, site)
                parts[1:1] = [part for part in proofs if part[0] == "table"]
            show(parts)
        if waits is not None:
            _after_wait(spec.name, answer, float(args["timeout_s"]))

    return click.Command(
        spec.name.replace("_", "-"),
        params=params,
        callback=callback,
        help=spec.description,
        short_help=spec.title,
    )


def add_tool_commands(group: click.Group) -> None:
    from siteaudit.adapters.mcp.tools import tool_specs
    from siteaudit.bootstrap import USE_CASES

    for spec in tool_specs(USE_CASES):
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
        fail("the tool server needs the MCP SDK: pip install siteaudit (it is a dependency)")
    if not local:
        from siteaudit.adapters.system import SystemClock

        application, caller = connect(server)
        serve_stdio(application, caller, now=SystemClock().now)
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
    asked: "AuditOptions",
    *,
    server: str | None,
    wait: bool,
    timeout_s: float,
    as_json: bool,
    as_csv: bool,
    fail_on: str | None,
    poll_s: float = 2.0,
) -> None:
    """Start an audit on the service, show its progress until it ends, then print its report."""
    from siteaudit.adapters.report_json import report_json
    from siteaudit.domain.audit import AuditStatus
    from siteaudit.domain.issue import Severity
    from siteaudit.entrypoints.oneshot import exit_for, print_summary
    from siteaudit.ports.application import run_declared

    application, caller = connect(server)
    started = guarded(lambda: asked.start(application, caller))
    # The audit as GET /crawls/{id} shows it (`GetAudit`'s answer).
    audit = guarded(lambda: run_declared(application, "GetAudit", caller, crawl_id=started.crawl_id))
    audit_id = audit.crawl_id
    if not wait:
        if as_json:
            echo(json_text({"crawl_id": audit_id, "status": audit.status.value}, indent=None))
        else:
            echo(
                f"audit {audit_id} started ({audit.max_pages} pages at most); "
                f"`siteaudit wait-for-audit {audit_id}` waits for it, `siteaudit get-report {audit_id}` reads it"
            )
        return
    deadline = time.monotonic() + timeout_s
    shown = ProgressBar.shown_on_terminal(quiet=as_json or as_csv)
    with ProgressBar(asked.url or audit.site_url, total=audit.max_pages, shown=shown) as bar:
        while True:
            current = guarded(lambda: run_declared(application, "GetAudit", caller, crawl_id=audit_id))
            waiting = "waiting in the queue" if current.status is AuditStatus.QUEUED else current.status.value
            started = current.started_at
            per_minute = 0.0
            if started is not None and current.pages_crawled:
                per_minute = current.pages_crawled / max(1.0, time.time() - started.timestamp()) * 60
            bar.update(current.pages_crawled, status=waiting, per_minute=per_minute)
            if current.status.ended:
                break
            if time.monotonic() >= deadline:
                fail(
                    f"audit {audit_id} is still {current.status.value} after {timeout_s:g} s (it keeps "
                    f"running); `siteaudit wait-for-audit {audit_id}` keeps waiting",
                    EXIT_STILL_RUNNING,
                )
            time.sleep(poll_s)
    if current.status is not AuditStatus.DONE:
        fail(f"audit {audit_id} ended {current.status.value}: {current.failure_reason}", EXIT_ENDED_BADLY)
    report = guarded(lambda: run_declared(application, "GetReport", caller, crawl_id=audit_id))
    if as_json:
        echo(json_text(report_json(report)))
    elif as_csv:
        print_rows(list(report_json(report)["issues"]))
    else:
        echo(f"audit {audit_id}")
        print_summary(report)
    code = exit_for(report, None if fail_on is None else Severity(fail_on), failed=EXIT_ENDED_BADLY)
    if code:
        sys.exit(code)
