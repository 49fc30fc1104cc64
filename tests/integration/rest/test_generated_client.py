"""A client generated with openapi-python-client from the served document types every answer by its
component name, and drives a live service: start two audits of a local site, read an audit, the
report and the diff through the generated models."""

import importlib
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live import PUBLIC_NAME, Keys, drain, retro_clock_site, seed, serve

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import App, bootstrap
from siteaudit.settings import Settings
from tests.local_sites import unpaced

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "siteaudit_client"
MAX_MODELS = (
    173  # one per component, request body, and enum or free-form mapping in them: not one per response
)
# (44 for the audits; the registered sites add 18 components and 4 request bodies with 2 enums; billing
# adds 1 component and 2 request bodies with 4 enums; IndexNow adds 14: its answers, their nested objects
# and enums, and its request bodies; the search console adds 31: its answers' components, their mappings
# and 2 enums, one request body; the device login 3 components and 2 request bodies; fix tasks and
# rechecks 13 components, 6 enums and 1 request body; 149 counted on the merged document, where some
# enums of one part name another's values and are generated apart; fix impact adds 4 components and 1 enum;
# the answers' warnings 3: UpdatedSite, Notice and its NoticeCode enum; audits without a score 2: the
# report's resource figures and the coverage warning's code enum; the device's own cancel 3: its answer,
# the answer's status enum and its request body; the export 2: its kind and format enums; staging access
# 3: its answer, its request body and the kinds' enum; the audit's scope 4: the query mode's enum, the rule
# given in a body, the rule shown in a site's answer and its kind's enum; starting an audit declared 2:
# its request body, typed now that the document states its rules under `not`, and the scope an audit shows)


@pytest.fixture
def service() -> Iterator[tuple[App, Keys, str]]:
    # The service may crawl 127.0.0.1, where the scripted site runs (as the fuzz tests' crawling side),
    # unpaced by the name it is reached at (tests/local_sites.py): the audits wait for no turns.
    app = bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **unpaced(PUBLIC_NAME)),
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({PUBLIC_NAME: ["127.0.0.1"]}),
    )
    keys = seed(app)
    with serve(app.rest_api()) as base:
        yield app, keys, base


@pytest.fixture
def client_package(service: tuple[App, Keys, str], tmp_path: Path) -> Iterator[Path]:
    _, _, base = service
    with urllib.request.urlopen(f"{base}/v1/openapi.json", timeout=10) as answer:
        document = json.load(answer)
    (tmp_path / "openapi.json").write_text(json.dumps(document))
    (tmp_path / "config.json").write_text(json.dumps({"package_name_override": PACKAGE, "post_hooks": []}))
    done = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(tmp_path / "openapi.json"),
            "--config",
            str(tmp_path / "config.json"),
            "--meta",
            "none",
            "--output-path",
            str(tmp_path / PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Unable to parse" not in done.stdout + done.stderr, done.stdout + done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path / PACKAGE
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def test_the_generated_models_are_the_components(client_package: Path) -> None:
    models = {path.name for path in (client_package / "models").glob("*.py")} - {"__init__.py"}
    assert {"report.py", "audit.py", "audit_row.py", "audit_list.py", "error.py", "diff.py"} <= models
    assert {"issue.py", "page.py", "template_group.py", "fix_prompt.py", "account.py"} <= models
    assert len(models) <= MAX_MODELS, sorted(models)
    assert not [name for name in models if "_response_" in name], sorted(models)


def test_the_generated_client_starts_an_audit_and_reads_it_typed(
    service: tuple[App, Keys, str], client_package: Path
) -> None:
    app, keys, base = service
    api: Any = importlib.import_module(f"{PACKAGE}.api.default")
    importlib.import_module(f"{PACKAGE}.api.default.start_crawl")
    models: Any = importlib.import_module(f"{PACKAGE}.models")
    package: Any = importlib.import_module(PACKAGE)
    client = package.AuthenticatedClient(base_url=base, token=keys.owner)

    def module(name: str) -> Any:
        return importlib.import_module(f"{api.__name__}.{name}")

    with serve(retro_clock_site) as site:
        port = site.rsplit(":", 1)[1]
        audits = []
        for _ in range(2):
            body = models.StartCrawlBody(url=f"http://{PUBLIC_NAME}:{port}/", max_pages=20, max_rps=3)
            started = module("start_crawl").sync(client=client, body=body)
            assert isinstance(started, models.AuditStarted), started
            drain(app)
            audits.append(started.crawl_id)

    audit = module("get_crawl").sync(started.crawl_id, client=client)
    assert isinstance(audit, models.Audit)
    assert audit.status == models.AuditStatus.DONE and audit.pages_crawled >= 4

    report = module("get_report").sync(audits[1], client=client)
    assert isinstance(report, models.Report)
    assert isinstance(report.totals, models.Totals) and report.totals.pages >= 4
    assert all(isinstance(row, models.CheckSummary) for row in report.issues) and report.issues
    assert isinstance(report.templates[0], models.TemplateGroup)
    assert isinstance(report.diff, models.Diff) and report.diff.previous_crawl_id == audits[0]
    assert 0 <= report.health_score <= 100 and report.fix_prompt

    first = module("get_diff").sync(audits[0], client=client)
    assert isinstance(first, models.ReportDiff) and first.diff is None
    diff = module("get_diff").sync(audits[1], client=client)
    assert isinstance(diff, models.ReportDiff) and isinstance(diff.diff, models.Diff)
    assert (diff.diff.new, diff.diff.fixed) == (0, 0)

    missing = module("get_report").sync(999_999, client=client)
    assert isinstance(missing, models.Error) and missing.error.code.value == "not_found"
