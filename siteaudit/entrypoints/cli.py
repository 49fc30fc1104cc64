"""The `siteaudit` command: serve, migrate, admin (until the web app exists), and more."""

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from siteaudit.domain.credit import as_number
from siteaudit.domain.error import DomainError

if TYPE_CHECKING:
    from siteaudit.bootstrap import App
    from siteaudit.ports.application import Application


def _app() -> "App":
    from siteaudit.bootstrap import bootstrap

    return bootstrap()


def _application() -> "Application":
    return _app().application


def _out(as_json: bool, data: dict[str, Any], text: str) -> None:
    click.echo(json.dumps(data, indent=2, default=str) if as_json else text)


def _run(action: Callable[[], None]) -> None:
    try:
        action()
    except DomainError as error:
        click.echo(f"error: {error.code}: {error.message}", err=True)
        sys.exit(2)


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")


@click.group()
@click.version_option(package_name="siteaudit")
def main() -> None:
    """siteaudit: crawl websites and report technical search-optimisation problems."""


@main.command()
@click.option("--host", default=None, help="Address to listen on (default SITEAUDIT_HOST or 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port to listen on (default SITEAUDIT_PORT or 8080).")
def serve(host: str | None, port: int | None) -> None:
    """Run the embedded service: API, database and workers in this one process."""
    from siteaudit.entrypoints.embedded import serve as run

    run(host=host, port=port)


@main.command()
@click.option(
    "--threads", default=None, type=int, help="Worker threads (default SITEAUDIT_WORKER_THREADS or 4)."
)
def worker(threads: int | None) -> None:
    """Consume crawl, finalisation and webhook work from SITEAUDIT_BROKER_URL (RabbitMQ) until stopped."""
    import signal
    import threading

    from siteaudit.adapters.log import configure_logging
    from siteaudit.entrypoints.worker import start_worker
    from siteaudit.settings import Settings

    settings = Settings.from_env()
    configure_logging(level=settings.log_level, as_json=settings.log_json)
    app = _app()
    if not app.settings.broker_url:
        click.echo(
            "error: set SITEAUDIT_BROKER_URL (amqp://...); `siteaudit serve` runs its own workers", err=True
        )
        sys.exit(2)
    running, periodic = start_worker(app, threads=threads or app.settings.worker_threads)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    click.echo(f"worker consuming from {app.settings.broker_url.split('@')[-1]}")
    stop.wait()
    periodic.stop()
    running.stop()


# --- the monitoring scheduler ---------------------------------------------------------------------------


@main.command()
def scheduler() -> None:
    """Start due monitoring audits and re-check ownership proofs every SITEAUDIT_SCHEDULER_EVERY_S, until
    stopped. Run one or more (each due audit starts once); `siteaudit serve` runs its own."""
    from siteaudit.adapters.log import configure_logging
    from siteaudit.entrypoints.scheduler import run_scheduler

    app = _app()
    configure_logging(level=app.settings.log_level, as_json=app.settings.log_json)
    click.echo(f"scheduler running every {app.settings.scheduling.every_s:g}s")
    run_scheduler(app)


# --- end of the monitoring scheduler ----------------------------------------------------------------------


@main.command()
def migrate() -> None:
    """Bring the database of SITEAUDIT_DATABASE_URL to the newest schema."""
    from siteaudit.adapters.sql import migrate as run_migrations
    from siteaudit.settings import Settings

    settings = Settings.from_env()
    run_migrations(settings.database_url)
    click.echo("database is at the newest schema")


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
        done = app.application.archive_audits(policy)
        _out(as_json, {"archived": [int(i) for i in done]}, f"archived {len(done)} audits")

    _run(act)


@main.group()
def admin() -> None:
    """Manage people, teams, plans, credits and keys (until the web app exists)."""


@admin.command("create-user")
@click.argument("email")
@click.option("--plan", default="free", show_default=True)
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
@click.argument("plan")
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
def list_keys(email: str, as_json: bool) -> None:
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
        _out(as_json, {"keys": rows}, text or "no keys")

    _run(act)


@admin.command("webhook-secret")
@click.argument("email")
@click.option(
    "--rotate", is_flag=True, help="Replace the secret now; retries of earlier webhooks use the new one."
)
@json_option
def webhook_secret(email: str, rotate: bool, as_json: bool) -> None:
    """Show (or rotate) the person's webhook signing secret (SPEC 2.11)."""

    def act() -> None:
        secret = _application().webhook_secret(email, rotate=rotate)
        _out(as_json, {"email": email, "webhook_secret": secret, "rotated": rotate}, secret)

    _run(act)


@main.command()
@click.argument("url")
@click.option(
    "--max-pages", type=int, default=None, help="Page cap (default 500: the cap without a verified site)."
)
@click.option("--max-rps", type=float, default=None, help="Requests per second, 0.5-3 (default 2).")
@click.option("--concurrency", type=int, default=None, help="Requests in flight, 1-20 (default 2).")
@click.option(
    "--verify-token", default=None, help="Sent as X-Service-Verify so a firewall can allow-list us."
)
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning"]),
    default=None,
    help="Exit 1 when the report has issues of this severity (or worse): gates a CI pipeline.",
)
def audit(
    url: str,
    max_pages: int | None,
    max_rps: float | None,
    concurrency: int | None,
    verify_token: str | None,
    as_json: bool,
    fail_on: str | None,
) -> None:
    """Audit URL once, in this process, and print the score, totals and top issues by template."""
    from siteaudit.entrypoints.oneshot import run_audit

    try:
        report = run_audit(
            url,
            max_pages=max_pages,
            max_rps=max_rps,
            concurrency=concurrency,
            verify_token=verify_token,
            progress=not as_json and sys.stderr.isatty(),
        )
    except DomainError as error:
        click.echo(f"error: {error.code}: {error.message}", err=True)
        sys.exit(2)
    if as_json:
        from siteaudit.adapters.report_json import report_json

        click.echo(json.dumps(report_json(report), indent=2))
    else:
        from siteaudit.entrypoints.oneshot import print_summary

        print_summary(report)
    counts = report.issue_counts
    failing = counts.error + (counts.warning if fail_on == "warning" else 0)
    if fail_on is not None and failing > 0:
        sys.exit(1)


# --- support's site commands (admin) ---------------------------------------------------------------------


@admin.command("list-sites")
@click.argument("team")
@json_option
def list_sites(team: str, as_json: bool) -> None:
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
        _out(as_json, {"sites": rows}, text or f"team {team} has no sites")

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
