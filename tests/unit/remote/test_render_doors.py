"""`render` (docs/rendering.md) through the agent tools, which are the remote CLI's commands too, and
through `siteaudit audit URL --render --server`: each reaches the service over the HTTP client, and the
audit it starts says whether it renders (`get-audit`). No audit here runs: nothing is rendered."""

import json
from typing import Any

import pytest

from tests.integration.rest.live import AllowAllLimiter
from tests.unit.remote.conftest import Service
from tests.unit.remote.test_remote_cli import cli


@pytest.fixture
def limiter() -> AllowAllLimiter:
    return AllowAllLimiter()


def as_json(service: Service, *args: str) -> Any:
    result = cli(service, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def renders(service: Service, crawl_id: int) -> bool:
    answer: bool = as_json(service, "get-audit", str(crawl_id))["render"]
    return answer


def test_start_audit_with_render_reserves_five_credits_a_page(service: Service) -> None:
    rendered = as_json(service, "start-audit", "--url", service.site_url, "--max-pages", "3", "--render")
    raw = as_json(service, "start-audit", "--url", service.site_url, "--max-pages", "3")
    assert (rendered["estimated_credits"], raw["estimated_credits"]) == (15, 3)
    assert renders(service, rendered["crawl_id"]) and not renders(service, raw["crawl_id"])


def test_a_sites_setting_and_a_site_audit_saying_otherwise(service: Service) -> None:
    site_id = str(service.audited_site())
    updated = as_json(service, "update-site", site_id, "--render")
    assert updated["render"] is True
    assert as_json(service, "get-site", site_id)["render"] is True
    by_setting = as_json(service, "start-site-audit", site_id, "--max-pages", "3")
    assert by_setting["estimated_credits"] == 15 and renders(service, by_setting["crawl_id"])
    raw = as_json(service, "start-site-audit", site_id, "--max-pages", "3", "--no-render")
    assert raw["estimated_credits"] == 3 and not renders(service, raw["crawl_id"])
    assert as_json(service, "update-site", site_id, "--no-render")["render"] is False


def test_the_audit_command_renders_on_the_service_when_asked(service: Service) -> None:
    args = ("audit", service.site_url, "--server", service.root, "--max-pages", "3", "--no-wait", "--json")
    rendered = json.loads(cli(service, *args, "--render").stdout)
    raw = json.loads(cli(service, *args).stdout)
    assert renders(service, rendered["crawl_id"]) and not renders(service, raw["crawl_id"])
