"""`siteaudit serve`: the embedded default in one process (API, SQLite database, in-process workers and
the monitoring scheduler)."""

import socketserver
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import click

from siteaudit.adapters.log import configure_logging
from siteaudit.bootstrap import bootstrap
from siteaudit.entrypoints.scheduler import start_scheduler
from siteaudit.entrypoints.worker import start_worker
from siteaudit.settings import Settings


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the access log middleware logs requests
        pass


def serve(*, host: str | None = None, port: int | None = None) -> None:
    settings = Settings.from_env()
    configure_logging(level=settings.log_level, as_json=settings.log_json)
    app = bootstrap(settings)
    host = host or settings.host
    port = port or settings.port
    issued = app.application.ensure_local_owner(
        plan=settings.local_owner_plan, starting_credits=settings.starting_credits
    )
    base = f"http://{host}:{port}/v1"
    click.echo(f"siteaudit is serving {base} (database: {settings.database_url})")
    if issued is not None:
        click.echo(
            "\nA local owner account was created with "
            f"{settings.starting_credits:,} credits. Its API key, shown only this once:\n\n    {issued.raw}\n"
        )
    key = issued.raw if issued is not None else "$SITEAUDIT_KEY"
    click.echo(
        "Try:\n"
        f"  curl -s {base}/account -H 'Authorization: Bearer {key}'\n"
        f"  curl -s {base}/crawls -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' "
        '-d \'{"url": "https://example.com/", "max_pages": 50}\'\n'
        f"  curl -s {base}/crawls/1/report -H 'Authorization: Bearer {key}'\n"
        f"The API is described at {base}/openapi.json. Stop with Ctrl-C."
    )
    worker, periodic = start_worker(app, threads=settings.worker_threads)
    scheduler = start_scheduler(app)  # monitoring audits and the daily ownership re-checks
    with make_server(
        host, port, app.rest_api(), server_class=_ThreadingServer, handler_class=_QuietHandler
    ) as server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo("stopping")
        finally:
            scheduler.stop()
            periodic.stop()
            worker.stop()
