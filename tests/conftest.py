"""Test-wide configuration: Hypothesis profiles (`dev` quick, `ci` thorough) chosen by HYPOTHESIS_PROFILE, and
the xdist groups of `make test` (`pytest -n ... --dist loadgroup`)."""

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Tests that must run on one xdist worker, one after the other, by path prefix (`--dist loadgroup`, through
# the scheduler below). Every other test goes on its own to whichever worker is free. Each group says why:
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
    # its module-scoped audits of 10,000 and 100,000 pages, on SQLite and on PostgreSQL: the tests alternate
    # between the workers, so each worker wrote all four (about 30 s under load on SQLite alone)
    "tests/integration/rest/test_export_memory.py": "export_memory",
    # its module-scoped chromium: one browser started for the module, never two at once from it
    "tests/integration/crawl/test_crawl_render.py": "crawl_render",
    # its module-scoped scenario (every pinned answer, made once) took 8 s on each worker under load
    "tests/unit/pinned/test_pinned_rest_answers.py": "pinned_rest_answers",
    # its module-scoped golden audit (two audits of the golden site, each waiting for its slow page) is read
    # by two of its tests: split over the workers, each worker made it (9-13 s under load)
    "tests/unit/pinned/test_mcp_budget.py": "mcp_budget",
}


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` with the groups above. (xdist's own loadgroup reads `xdist_group` marks by renaming
    each test's node id, which pytest 9 no longer lets a plugin do: with pytest 9.2 and xdist 3.8 the marks
    are silently ignored. The scheduler sees every test's node id, so it groups by path itself.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class PathGroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            for prefix, group in XDIST_GROUPS.items():
                if nodeid.startswith(prefix):
                    return group
            return nodeid  # a scope of its own: sent to any free worker

    return PathGroupScheduling(config, log)
