"""The WSGI app factory for gunicorn: `gunicorn 'siteaudit.entrypoints.wsgi:create_app()'`.

Each gunicorn worker is its own process with its own counters: export PROMETHEUS_MULTIPROC_DIR (an
empty directory, emptied again at every start) before gunicorn starts, and every worker writes its
metrics there and `GET /metrics` from any of them adds all of them up (README "Metrics").
"""

from typing import Any

from siteaudit.bootstrap import bootstrap, warn_if_networks_allowed


def create_app() -> Any:
    from siteaudit.adapters.log import configure_logging
    from siteaudit.settings import Settings

    settings = Settings.from_env()
    configure_logging(level=settings.log_level, as_json=settings.log_json)
    warn_if_networks_allowed(settings)
    return bootstrap(settings).service()
