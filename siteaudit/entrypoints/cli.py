# Over 500 lines: one click command per CLI verb, each a few lines of argument parsing around one application call; split by noun (admin, sites) when the remote commands arrive.
"""The `siteaudit` command: serve, migrate, admin (until the web app exists), and more."""

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from siteaudit.adapters.text import csv_records, json_text
from siteaudit.domain.account import DEFAULT_PLANS
from siteaudit.domain.credit import as_number
from siteaudit.domain.error import DomainError
from siteaudit.entrypoints.output import echo, error_line

if TYPE_CHECKING:
    from siteaudit.bootstrap import App
    from siteaudit.ports.application import Admin
    from siteaudit.settings import Settings

T = TypeVar("T")


def _fail(message: str) -> NoReturn:
    """One line on stderr and exit code 2: no traceback."""
    error_line(message)
    sys.exit(2)


def _starting(build: Callable[[], T]) -> T:
    """Settings and bootstrap: a setting that stops the start (SITEAUDIT_SECRET_KEY missing, an
    unreadable SITEAUDIT_CA_BUNDLE, a malformed number or network) is one `error:` line and exit 2."""
    try:
        return build()
    except (ValueError, OSError) as error:
        _fail(str(error))


def _settings() -> "Settings":
    from siteaudit.settings import Settings

    return _starting(Settings.from_env)


def _app(settings: "Settings | None" = None) -> "App":
    from siteaudit.bootstrap import bootstrap

    settings = settings or _settings()
    return _starting(lambda: bootstrap(settings))


def _admin(app: "App") -> "Admin":
    """The administration role of the application: all the admin commands use (docs/architecture.md "Roles")."""
    return app.application


def _application() -> "Admin":
    return _admin(_app())


def _out(as_json: bool, data: dict[str, Any], text: str) -> None:
    echo(json_text(data) if as_json else text)


def _listed(as_json: bool, as_csv: bool, data: dict[str, Any], rows: list[dict[str, Any]], text: str) -> None:
    """A list: `data` as JSON, `rows` as CSV (nested values flattened, `text.csv_records`), or `text`."""
    if as_csv:
        click.echo(csv_records(rows), nl=False)
    else:
        _out(as_json, data, text)


def _run(action: Callable[[], None]) -> None:
    try:
        action()
    except DomainError as error:
        _fail(f"{error.code}: {error.message}")


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
csv_option = click.option(
    "--csv", "as_csv", is_flag=True, help="Print the rows as CSV (lists joined by '; ') for spreadsheets."
)


@click.group()
@click.version_option(package_name="siteaudit")
def main() -> None:
    """siteaudit: crawl websites and report technical search-optimisation problems."""


@main.command()
@click.option("--host", default=None, help="Address to listen on (default SITEAUDIT_HOST or 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port to listen on (default SITEAUDIT_PORT or 8080).")
def serve(host: str | None, port: int | None) -> None:
    """Run the embedded service: API, database and workers in this one process."""
    from attrs import evolve

    from siteaudit.adapters.log import configure_logging
    from siteaudit.bootstrap import warn_if_networks_allowed
    from siteaudit.entrypoints.embedded import CannotListen, listen
    from siteaudit.entrypoints.embedded import serve as run

    settings = _settings()
    # The address given here is also where links point (device login, mails) unless SITEAUDIT_PUBLIC_URL says.
    settings = evolve(settings, host=host or settings.host, port=port if port is not None else settings.port)
    configure_logging(level=settings.log_level, as_json=settings.log_json)
    warn_if_networks_allowed(settings)
    app = _app(settings)
    host = settings.host
    try:
        server = listen(app, host, settings.port)
    except CannotListen as error:
        _fail(str(error))
    run(app, server, host=host)


def _worker_queues(given: tuple[str, ...]) -> tuple[str, ...]:
    """`--queues crawl,webhooks` (or repeated): the queue names, each known, in order; all without it."""
    from siteaudit.adapters.queue.dramatiq import QUEUES

    names = tuple(dict.fromkeys(name.strip() for value in given for name in value.split(",") if name.strip()))
    unknown = [name for name in names if name not in QUEUES]
    if unknown:
        raise click.BadParameter(
            f"no queue named {', '.join(map(repr, unknown))}: the queues are {', '.join(QUEUES)}"
        )
    if given and not names:
        raise click.BadParameter(f"name one or more of {', '.join(QUEUES)}")
    return names or QUEUES


@main.command()
@click.option(
    "--threads", default=None, type=int, help="Worker threads (default SITEAUDIT_WORKER_THREADS or 4)."
)
@click.option(
    "--metrics-port",
    default=None,
    type=click.IntRange(0, 65535),
    help="Serve this worker's Prometheus metrics on this port (docs/operations.md).",
)
@click.option(
    "--queues",
    multiple=True,
    callback=lambda _ctx, _param, value: _worker_queues(value),
    metavar="NAME[,NAME...]",
    help="Take only these queues: crawl, finalize, webhooks (default all; docs/operations.md).",
)
def worker(threads: int | None, metrics_port: int | None, queues: tuple[str, ...]) -> None:
    """Consume crawl, finalisation and webhook work from SITEAUDIT_BROKER_URL (RabbitMQ) until stopped."""
    import signal
    import threading

    from siteaudit.adapters.log import configure_logging
    from siteaudit.bootstrap import warn_if_networks_allowed
    from siteaudit.entrypoints.worker import serve_worker_metrics, start_worker

    settings = _settings()
    configure_logging(level=settings.log_level, as_json=settings.log_json)
    if not settings.broker_url:
        _fail("set SITEAUDIT_BROKER_URL (amqp://...); `siteaudit serve` runs its own workers")
    warn_if_networks_allowed(settings)
    app = _app(settings)
    stop_metrics = None if metrics_port is None else serve_worker_metrics(app, metrics_port)
    running, periodic = start_worker(app, threads=threads or app.settings.worker_threads, queues=queues)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    echo(f"worker consuming {', '.join(queues)} from {app.settings.broker_url.split('@')[-1]}")
    stop.wait()
    periodic.stop()
    running.stop()
    if stop_metrics is not None:
        stop_metrics()


# --- the monitoring scheduler ---------------------------------------------------------------------------


@main.command()
@click.option("--once", is_flag=True, help="Run one pass now and exit (operators, tests).")
def scheduler(once: bool) -> None:
    """Start due monitoring audits and re-check ownership proofs every SITEAUDIT_SCHEDULER_EVERY_S, until
    stopped. Run one or more (each due audit starts once); `siteaudit serve` runs its own."""
    from siteaudit.adapters.log import configure_logging
    from siteaudit.entrypoints.scheduler import run_scheduler, scheduler_pass

    settings = _settings()
    if not settings.broker_url:
        # Without RabbitMQ nothing would take the audits it starts: each would end dispatch_failed.
        _fail("set SITEAUDIT_BROKER_URL (amqp://...); `siteaudit serve` runs its own scheduler")
    app = _app(settings)
    configure_logging(level=app.settings.log_level, as_json=app.settings.log_json)
    if once:
        done = scheduler_pass(app.application, app.clock.now)()
        skipped = ", ".join(f"site {site} {reason.value}" for site, reason in done.skipped.items())
        echo(
            f"scheduler pass: {len(done.started)} scheduled audits started"
            f" ({', '.join(str(a) for a in done.started) or 'none'}), {len(done.skipped)} skipped"
            + (f" ({skipped})" if skipped else "")
        )
        return
    echo(f"scheduler running every {app.settings.scheduling.every_s:g}s")
    run_scheduler(app)


# --- end of the monitoring scheduler ----------------------------------------------------------------------


@main.command()
def migrate() -> None:
    """Bring the database of SITEAUDIT_DATABASE_URL to the newest schema."""
    from siteaudit.bootstrap import migrate_database

    settings = _settings()
    if settings.database_url.startswith("memory:"):
        _fail("SITEAUDIT_DATABASE_URL is memory://: there is no schema to migrate")
    echo(_starting(lambda: migrate_database(settings.database_url)).describe())


@main.command()
@click.option(
    "--older-than-days", type=click.IntRange(min=0), default=None, help="Audits ended this long ago."
)
@click.option("--keep-last", type=click.IntRange(min=0), default=None, help="All but the last N per site.")
@json_option
def archive(older_than_days: int | None, keep_last: int | None, as_json: bool) -> None:
    """Archive the issue and page rows of old audits now (reports, diffs and fix prompts stay)."""
    from siteaudit.ports.application import ArchivePolicy

    def act() -> None:
        app = _app()
        days = older_than_days if older_than_days is not None else app.settings.archive_after_days
        keep = keep_last if keep_last is not None else app.settings.archive_keep_last
        policy = ArchivePolicy(older_than_days=days, keep_last=keep)
        if not policy.selects_anything:
            raise click.UsageError(
                "give --older-than-days or --keep-last (or set the SITEAUDIT_ARCHIVE_* settings)"
            )
        done = _admin(app).archive_audits(policy)
        _out(as_json, {"archived": [int(i) for i in done]}, f"archived {len(done)} audits")

    _run(act)


@main.group()
def admin() -> None:
    """Manage people, teams, plans, credits, keys and app passwords (for scripts; people use /app)."""


@admin.command("create-user")
@click.argument("email")
@click.option(
    "--plan",
    type=click.Choice(list(DEFAULT_PLANS)),
    default="free",
    show_default=True,
    help="What their own audits may do (docs/rest-api.md, Plans).",
)
@json_option
def create_user(email: str, plan: str, as_json: bool) -> None:
    """Create a person (with their webhook signing secret)."""

    def act() -> None:
        user = _application().create_user(email, plan=plan)
        _out(
            as_json,
            {"id": user.id, "email": user.email, "plan": user.plan},
            f"created user {user.id} {user.email}",
        )

    _run(act)


@admin.command("create-team")
@click.argument("name")
@click.option("--owner", "owner", required=True, help="Email of the owner.")
@json_option
def create_team(name: str, owner: str, as_json: bool) -> None:
    """Create a team owned by an existing person."""

    def act() -> None:
        team = _application().create_team(name, owner_email=owner)
        _out(
            as_json,
            {"id": team.id, "name": team.name, "owner_id": team.owner_id},
            f"created team {team.id} {team.name}",
        )

    _run(act)


@admin.command("add-member")
@click.argument("team")
@click.argument("email")
@json_option
def add_member(team: str, email: str, as_json: bool) -> None:
    """Add a person to a team."""

    def act() -> None:
        membership = _application().add_member(team, email)
        _out(
            as_json,
            {"team_id": membership.team_id, "user_id": membership.user_id, "role": membership.role.value},
            f"{email} is a {membership.role.value} of {team}",
        )

    _run(act)


@admin.command("remove-member")
@click.argument("team")
@click.argument("email")
@json_option
def remove_member(team: str, email: str, as_json: bool) -> None:
    """Remove a person from a team: their keys for it answer 403 team_access_revoked."""

    def act() -> None:
        _application().remove_member(team, email)
        _out(as_json, {"team": team, "email": email, "removed": True}, f"{email} left {team}")

    _run(act)


@admin.command("set-plan")
@click.argument("email")
@click.argument("plan", type=click.Choice(list(DEFAULT_PLANS)))
@json_option
def set_plan(email: str, plan: str, as_json: bool) -> None:
    """Put a person on a plan (free, starter, growth, scale)."""

    def act() -> None:
        user = _application().set_plan(email, plan)
        _out(as_json, {"email": user.email, "plan": user.plan}, f"{user.email} is on {user.plan}")

    _run(act)


@admin.command("grant-credits")
@click.argument("email")
@click.argument("amount", type=click.FloatRange(min=0.1))
@click.option("--key", "idempotency_key", default=None, help="Makes a repeated grant a no-op.")
@json_option
def grant_credits(email: str, amount: float, idempotency_key: str | None, as_json: bool) -> None:
    """Add credits to a person's own balance."""
    import uuid

    def act() -> None:
        tenths = round(amount * 10)
        key = idempotency_key or f"admin:{uuid.uuid4()}"
        balance = _application().grant_credits(email, tenths, idempotency_key=key)
        _out(
            as_json,
            {"email": email, "balance": as_number(balance)},
            f"{email} now has {as_number(balance)} credits",
        )

    _run(act)


@admin.command("create-key")
@click.argument("email")
@click.option("--team", required=True, help="Name of the team the key acts for.")
@json_option
def create_key(email: str, team: str, as_json: bool) -> None:
    """Create the person's Settings key for a team; the key is printed once."""

    def act() -> None:
        issued = _application().create_key(email, team)
        _out(as_json, {"api_key": issued.raw, "prefix": issued.key.prefix}, issued.raw)

    _run(act)


@admin.command("rotate-key")
@click.argument("email")
@click.option("--team", required=True, help="Name of the team the key acts for.")
@json_option
def rotate_key(email: str, team: str, as_json: bool) -> None:
    """Revoke the person's Settings key for a team at once and print its successor once."""

    def act() -> None:
        issued = _application().rotate_key(email, team)
        _out(as_json, {"api_key": issued.raw, "prefix": issued.key.prefix}, issued.raw)

    _run(act)


@admin.command("revoke-key")
@click.argument("email")
@click.argument("prefix")
@json_option
def revoke_key(email: str, prefix: str, as_json: bool) -> None:
    """Revoke one of the person's keys by its 12-character prefix."""

    def act() -> None:
        revoked = _application().revoke_key(email, prefix)
        _out(as_json, {"prefix": revoked.prefix, "status": revoked.status.value}, f"revoked {revoked.prefix}")

    _run(act)


@admin.command("list-keys")
@click.argument("email")
@json_option
@csv_option
def list_keys(email: str, as_json: bool, as_csv: bool) -> None:
    """The person's keys: prefix, team, label, created, last used, status."""

    def act() -> None:
        rows = [
            {
                "prefix": k.prefix,
                "team_id": k.team_id,
                "label": k.label,
                "created_at": k.created_at.isoformat(),
                "last_used_at": k.last_used_at.isoformat() if k.last_used_at else None,
                "status": k.status.value,
            }
            for k in _application().list_keys(email)
        ]
        text = "\n".join(
            f"{r['prefix']}  team {r['team_id']}  {r['status']:8}  {r['label']}  last used {r['last_used_at'] or 'never'}"
            for r in rows
        )
        _listed(as_json, as_csv, {"keys": rows}, rows, text or "no keys")

    _run(act)


@admin.command("webhook-secret")
@click.argument("email")
@click.option(
    "--rotate", is_flag=True, help="Replace the secret now; retries of earlier webhooks use the new one."
)
@json_option
def webhook_secret(email: str, rotate: bool, as_json: bool) -> None:
    """Show (or rotate) the person's webhook signing secret."""

    def act() -> None:
        secret = _application().webhook_secret(email, rotate=rotate)
        _out(as_json, {"email": email, "webhook_secret": secret, "rotated": rotate}, secret)

    _run(act)


@admin.command("list-users")
@json_option
@csv_option
def list_users(as_json: bool, as_csv: bool) -> None:
    """Every person: id, email, plan, own credits, teams."""

    def act() -> None:
        people = _application().list_users()
        rows = [
            {
                "id": p.user.id,
                "email": p.user.email,
                "plan": p.user.plan,
                "balance": as_number(p.balance),
                "teams": list(p.teams),
            }
            for p in people
        ]
        text = "\n".join(
            f"{p.user.id:>4}  {p.user.email}  {p.user.plan}  {as_number(p.balance)} credits  "
            f"teams: {', '.join(p.teams) or '-'}"
            for p in people
        )
        _listed(as_json, as_csv, {"users": rows}, rows, text or "no users")

    _run(act)


@admin.command("list-teams")
@json_option
@csv_option
def list_teams(as_json: bool, as_csv: bool) -> None:
    """Every team: id, name, owner, the owner's credits (they pay for site audits), members."""

    def act() -> None:
        rows = [
            {
                "id": t.team.id,
                "name": t.team.name,
                "owner": t.owner_email,
                "owner_balance": as_number(t.owner_balance),
                "members": t.members,
            }
            for t in _application().list_teams()
        ]
        text = "\n".join(
            f"{r['id']:>4}  {r['name']}  owner {r['owner']} ({r['owner_balance']} credits)  {r['members']} members"
            for r in rows
        )
        _listed(as_json, as_csv, {"teams": rows}, rows, text or "no teams")

    _run(act)


@admin.command("whoami")
@click.argument("key")
@json_option
def whoami(key: str, as_json: bool) -> None:
    """Whose KEY is (the key, or the start of its 12-character prefix): holder, team, kind, status."""

    def act() -> None:
        holder = _application().whoami(key)
        k = holder.key
        data = {
            "prefix": k.prefix,
            "email": holder.email,
            "team": holder.team_name,
            "kind": k.kind.value,
            "status": k.status.value,
            "created_at": k.created_at.isoformat(),
            "last_used_at": k.last_used_at.isoformat() if k.last_used_at else None,
        }
        text = (
            f"{k.prefix}: {k.kind.value} key of {holder.email} for team {holder.team_name}, {k.status.value}, "
            f"last used {data['last_used_at'] or 'never'}"
        )
        _out(as_json, data, text)

    _run(act)


# --- the app at /app: a person's password (docs/app.md) ------------------------------------------------


@admin.command("set-password")
@click.argument("email")
@click.option(
    "--password-stdin", is_flag=True, help="Read the password from standard input instead of a prompt."
)
def set_password(email: str, password_stdin: bool) -> None:
    """Set the person's password for the app at /app (at least 12 characters); their sessions end."""

    def act() -> None:
        if password_stdin:
            password = sys.stdin.readline().rstrip("\r\n")
        else:
            password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
        user = _application().set_password(email, password)
        echo(f"password set for {user.email}; sign in at /app/sign-in")

    _run(act)


@admin.command("password-link")
@click.argument("email")
def password_link(email: str) -> None:
    """Print a one-time link (valid an hour) where the person chooses their app password: at
    SITEAUDIT_PUBLIC_URL, else where a `serve` on this database runs, else at SITEAUDIT_HOST:PORT."""
    from siteaudit.entrypoints.embedded import running_origin

    settings = _settings()

    def act() -> None:
        link = _admin(_app(settings)).password_link(email)
        running = None if settings.public_url else running_origin(settings)
        echo(link if running is None else running + link[link.index("/app/") :])

    _run(act)


@main.command()
@click.argument("url", required=False)
@click.option(
    "--urls",
    "urls_file",
    type=click.File("r"),
    default=None,
    help="Audit exactly the URLs of this file, one a line (- for standard input), nothing followed; "
    "instead of URL.",
)
@click.option("--sitemap-only", is_flag=True, help="Audit only what the site's sitemaps list.")
@click.option(
    "--max-pages", type=int, default=None, help="Page cap (default 500: the cap without a verified site)."
)
@click.option("--max-rps", type=float, default=None, help="Requests per second, 0.5-3 (default 2).")
@click.option("--concurrency", type=int, default=None, help="Requests in flight, 1-20 (default 2).")
@click.option(
    "--verify-token", default=None, help="Sent as X-Service-Verify so a firewall can allow-list us."
)
@click.option(
    "--render",
    is_flag=True,
    help="Render each HTML page in a browser (JavaScript) and judge the rendered page; 5 credits a page.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning"]),
    default=None,
    help="Exit 1 when the report has issues of this severity (or worse): gates a CI pipeline.",
)
@click.option(
    "--server",
    default=None,
    envvar="SITEAUDIT_URL",
    metavar="URL",
    help="Audit on this siteaudit service (default SITEAUDIT_URL) with the key in SITEAUDIT_API_KEY, "
    "instead of in this process.",
)
@click.option(
    "--wait/--no-wait", default=True, help="With --server: wait for the end and print the report (default)."
)
@click.option(
    "--timeout", "timeout_s", type=float, default=3600.0, help="With --server: how long --wait waits."
)
@click.option("--csv", "as_csv", is_flag=True, help="With --server: print the report's checks as CSV.")
def audit(
    url: str | None,
    urls_file: Any,
    sitemap_only: bool,
    max_pages: int | None,
    max_rps: float | None,
    concurrency: int | None,
    verify_token: str | None,
    render: bool,
    as_json: bool,
    fail_on: str | None,
    server: str | None,
    wait: bool,
    timeout_s: float,
    as_csv: bool,
) -> None:
    """Audit URL (or exactly the URLs of --urls) and print the score, totals and top issues by template:
    in this process, or on the service given by --server or SITEAUDIT_URL (with a progress bar while it
    runs)."""
    from siteaudit.domain.issue import Severity

    if (url is None) == (urls_file is None):
        raise click.UsageError("give URL or --urls FILE (one of them)")
    from siteaudit.entrypoints.oneshot import AuditOptions

    asked = AuditOptions(
        url,
        max_pages=max_pages,
        max_rps=max_rps,
        concurrency=concurrency,
        verify_token=verify_token,
        render=render,
        urls=None if urls_file is None else _listed_urls(urls_file),
        sitemap_only=sitemap_only,
    )
    if server:
        from siteaudit.entrypoints.remote import remote_audit

        remote_audit(
            asked,
            server=server,
            wait=wait,
            timeout_s=timeout_s,
            as_json=as_json,
            as_csv=as_csv,
            fail_on=fail_on,
        )
        return
    from siteaudit.entrypoints.oneshot import (
        exit_for,
        one_shot_application,
        run_audit,
    )

    settings = _settings()
    application = _starting(lambda: one_shot_application(settings))
    try:
        report = run_audit(application, asked, progress=not as_json and sys.stderr.isatty())
    except DomainError as error:
        _fail(f"{error.code}: {error.message}")
    if as_json:
        from siteaudit.adapters.report_json import report_json

        echo(json_text(report_json(report)))
    else:
        from siteaudit.entrypoints.oneshot import print_summary

        print_summary(report)
    code = exit_for(report, None if fail_on is None else Severity(fail_on), failed=1)
    if code:
        sys.exit(code)


def _listed_urls(source: Any) -> tuple[str, ...]:
    """The URLs of a `--urls` file: one a line, surrounding space and blank lines left out (the service
    judges each URL and names a bad one by its place, `urls[3]`)."""
    urls = tuple(stripped for raw in source.read().splitlines() if (stripped := raw.strip()))
    if not urls:
        raise click.UsageError("the --urls file lists no URL")
    return urls


# --- support's site commands (admin) ---------------------------------------------------------------------


@admin.command("console-connect")
@click.argument("team")
@click.option(
    "--refresh-token-file",
    "token_file",
    type=click.File("r"),
    required=True,
    help="A file holding the Google OAuth refresh token (- for standard input; never on the command line).",
)
@click.option("--account", default="", help="Who granted it (shown as the connection's account).")
@json_option
def console_connect(team: str, token_file: Any, account: str, as_json: bool) -> None:
    """Connect TEAM's search console with an OAuth refresh token (stored sealed; an earlier grant is
    revoked). The grant's OAuth client is SITEAUDIT_GSC_CLIENT_ID and SITEAUDIT_GSC_CLIENT_SECRET."""

    def act() -> None:
        token = token_file.read().strip()
        if not token:
            raise click.UsageError("the refresh-token file is empty")
        _application().connect_search_console(team, token, account=account or team)
        _out(as_json, {"team": team, "connected": True}, f"search console connected for team {team}")

    _run(act)


@admin.command("console-disconnect")
@click.argument("team")
@json_option
def console_disconnect(team: str, as_json: bool) -> None:
    """Forget TEAM's search-console OAuth grant and revoke it at Google."""

    def act() -> None:
        removed = _application().disconnect_search_console(team)
        _out(
            as_json,
            {"team": team, "disconnected": removed},
            f"team {team}: " + ("disconnected" if removed else "was not connected"),
        )

    _run(act)


@admin.command("list-sites")
@click.argument("team")
@json_option
@csv_option
def list_sites(team: str, as_json: bool, as_csv: bool) -> None:
    """List every site of TEAM (support)."""

    def act() -> None:
        sites = _application().list_team_sites(team)
        rows = [
            {
                "id": int(s.id),
                "url": s.url,
                "status": s.status.value,
                "verified_via": s.verified_via.value if s.verified_via is not None else None,
                "lost_at": s.lost_at,
                "monitoring": s.monitoring.value,
                "next_crawl_at": s.next_crawl_at,
                "last_skip_reason": s.last_skip_reason,
            }
            for s in sites
        ]
        text = "\n".join(
            f"{r['id']}\t{r['url']}\t{r['status']}\t{r['monitoring']}\t{r['last_skip_reason'] or ''}"
            for r in rows
        )
        _listed(as_json, as_csv, {"sites": rows}, rows, text or f"team {team} has no sites")

    _run(act)


@admin.command("verify-site")
@click.argument("site_id", type=click.IntRange(min=1))
@click.option("--by-hand", is_flag=True, required=True, help="Verify without a proof (support).")
@click.option("--reason", required=True, help="Why, for the log.")
@json_option
def verify_site(site_id: int, by_hand: bool, reason: str, as_json: bool) -> None:
    """Mark site SITE_ID verified by hand, logging REASON (support)."""
    from siteaudit.domain.ids import SiteId

    if not by_hand:
        raise click.UsageError("only --by-hand verification is offered here; owners use POST /verify")

    def act() -> None:
        site = _application().verify_site_by_hand(SiteId(site_id), reason)
        _out(as_json, {"id": int(site.id), "status": site.status.value}, f"site {site.id} is verified")

    _run(act)


# --- the agent tool server and the remote commands ----------------------------------------------

from siteaudit.entrypoints.remote import add_tool_commands, mcp  # noqa: E402

main.add_command(mcp)
add_tool_commands(main)


# --- siteaudit connect / disconnect: the device login writing agents' MCP configuration ---------

from siteaudit.entrypoints.connect import connect, disconnect  # noqa: E402

main.add_command(connect)
main.add_command(disconnect)
