"""The WSGI app factory for gunicorn: `gunicorn 'siteaudit.entrypoints.wsgi:create_app()'`."""

from typing import Any

from siteaudit.bootstrap import bootstrap


def create_app() -> Any:
    return bootstrap().rest_api()
