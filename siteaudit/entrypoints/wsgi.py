"""The WSGI app factory for gunicorn: `gunicorn 'siteaudit.entrypoints.wsgi:create_app()'`.

Each gunicorn worker is its own process with its own counters: export PROMETHEUS_MULTIPROC_DIR (an
empty directory, emptied again at every start) before gunicorn starts, and every worker writes its
metrics there and `GET /metrics` from any of them adds all of them up (docs/operations.md "Metrics").
"""

import logging
import sys
from typing import Any, Final

from siteaudit.adapters.text import line
from siteaudit.bootstrap import bootstrap, warn_if_networks_allowed

# gunicorn's exit code for an app that failed to load: its arbiter stops ("App failed to load.") instead
# of starting the worker again and again.
APP_LOAD_ERROR: Final = 4

log = logging.getLogger("siteaudit")


def create_app() -> Any:
    """The service. A setting that stops the start (docs/cli.md) is one logged line and gunicorn stops,
    with no traceback."""
    from siteaudit.adapters.log import configure_logging
    from siteaudit.settings import Settings

    try:
        settings = Settings.from_env()
        configure_logging(level=settings.log_level, as_json=settings.log_json)
        warn_if_networks_allowed(settings)
        return bootstrap(settings).service()
    except (ValueError, OSError) as error:
        log.critical("cannot start: %s", line(str(error)))
        sys.exit(APP_LOAD_ERROR)
