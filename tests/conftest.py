"""Test-wide configuration: Hypothesis profiles (`dev` quick, `ci` thorough) chosen by HYPOTHESIS_PROFILE, and
the xdist groups of `make test` (`pytest -n ... --dist loadgroup`)."""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Tests that must run on one xdist worker, one after the other, by path prefix. Every other test goes to
# whichever worker is free. Each group says why:
# - browser: each module starts a chromium (hundreds of MB, several processes); two at once on a small
#   machine slow both past their page waits.
# - worker_processes: each test starts several worker processes (dramatiq, PostgreSQL pools, RabbitMQ);
#   two such tests at once exhausted PostgreSQL's 100 connections, and the host-limit test measures a
#   request rate that another crawl on the same cores skews.
# - a module with a module-scoped service (a gunicorn, a seeded fuzz target): split over two workers, each
#   worker would start its own copy; kept together it starts once.
XDIST_GROUPS = {
    "tests/integration/web/": "browser",
    "tests/integration/billing/": "browser",
    "tests/integration/workers/": "worker_processes",
    "tests/integration/rest/test_mcp_gunicorn.py": "mcp_gunicorn",
    "tests/integration/rest/test_rest_fuzz.py": "rest_fuzz",
    "tests/integration/rest/test_rest_rate_limit.py": "rest_rate_limit",
}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        for prefix, group in XDIST_GROUPS.items():
            if path.startswith(prefix):
                item.add_marker(pytest.mark.xdist_group(group))
