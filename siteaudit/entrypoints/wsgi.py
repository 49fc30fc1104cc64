"""The WSGI app factory for gunicorn: `gunicorn 'siteaudit.entrypoints.wsgi:create_app()'`."""

from typing import Any

from siteaudit.bootstrap import bootstrap


def create_app() -> Any:
    from siteaudit.adapters.log import configure_logging
    from siteaudit.settings import Settings

    settings = Settings.from_env()
    configure_logging(level=settings.log_level, as_json=settings.log_json)
    return bootstrap(settings).rest_api()
