"""Metrics of several processes: with PROMETHEUS_MULTIPROC_DIR set, processes (gunicorn's workers,
`siteaudit worker`s on the same machine) write their counters to files there and any one's /metrics adds
them all up; `siteaudit worker --metrics-port` serves a worker's own."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.metrics import PrometheusMetrics
from siteaudit.bootstrap import bootstrap
from siteaudit.entrypoints.worker import serve_worker_metrics
from siteaudit.settings import Settings

ROOT = Path(__file__).resolve().parents[3]

# One process of the service: `n` REST requests, `n` pages fetched, `n` credits charged; with "scrape",
# it prints its own /metrics instead.
PROCESS = """
import sys
import time

import falcon.testing

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.settings import Settings

app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue())
client = falcon.testing.TestClient(app.rest_api())
if sys.argv[1] == "scrape":
    sys.stdout.write(client.simulate_get("/metrics").text)
else:
    n = int(sys.argv[1])
    for _ in range(n):
        assert client.simulate_get("/v1/health").status_code == 200
        app.metrics.page_fetched("ok")
    app.metrics.credits_charged(n * 10)
"""


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted((k, v) for k, v in sample.labels.items() if k != "pid"))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def run(directory: Path, *args: str) -> "subprocess.Popen[str]":
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", PROCESS, *args], env=env, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )


HEALTH = (
    "siteaudit_http_request_duration_seconds_count",
    (("method", "GET"), ("route", "/v1/health"), ("status", "2xx")),
)
PAGES_OK = ("siteaudit_pages_fetched_total", (("outcome", "ok"),))
CREDITS = ("siteaudit_credits_charged_tenths_total", ())


def test_two_processes_writing_to_one_multiprocess_dir_add_up(tmp_path: Path) -> None:
    first, second = run(tmp_path, "3"), run(tmp_path, "4")
    assert first.wait(timeout=120) == 0
    assert second.wait(timeout=120) == 0
    scraper = run(tmp_path, "scrape")
    out, _ = scraper.communicate(timeout=120)
    assert scraper.returncode == 0

    scraped = samples(out)
    assert scraped[HEALTH] == 7
    assert scraped[PAGES_OK] == 7
    assert scraped[CREDITS] == 70
    # The audits by status are read from the scraping process's database, once, not from the files.
    assert scraped[("siteaudit_audits", (("status", "done"),))] == 0
    # Any reader of the directory sees the same sums (this test process never wrote there).
    assert samples(PrometheusMetrics(multiprocess_dir=str(tmp_path)).exposition().decode())[PAGES_OK] == 7


def test_a_missing_multiprocess_dir_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="PROMETHEUS_MULTIPROC_DIR"):
        PrometheusMetrics(multiprocess_dir=str(tmp_path / "absent"))


def test_a_worker_serves_its_own_metrics_on_the_metrics_port() -> None:
    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue())
    assert app.metrics is not None
    stop = serve_worker_metrics(app, 0)  # any free port
    try:
        app.metrics.page_fetched("broken")
        with urllib.request.urlopen(
            f"http://127.0.0.1:{app.metrics.served_port}/metrics", timeout=10
        ) as answer:
            text = answer.read().decode()
    finally:
        stop()
    scraped = samples(text)
    assert scraped[("siteaudit_pages_fetched_total", (("outcome", "broken"),))] == 1
    assert scraped[("siteaudit_audits", (("status", "queued"),))] == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_gunicorn_workers_answer_the_sum_of_all_workers(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "SITEAUDIT_DATABASE_URL": "memory://",
    }
    command = [sys.executable, "-m", "gunicorn", "--workers", "3", "--bind", f"127.0.0.1:{port}"]
    command += ["--graceful-timeout", "3"]  # stopped after the scrapes: no need to wait 30 s for idle workers
    server = subprocess.Popen(
        [*command, "siteaudit.entrypoints.wsgi:create_app()"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        # Wait for the listening socket, not for an answer: a health probe that timed out on a busy
        # machine was still answered and counted by a worker, so probing by health skewed the count.
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        for _ in range(30):  # spread over the workers; a generous timeout, so none is asked twice
            urllib.request.urlopen(f"{base}/v1/health", timeout=60).close()
        scrapes = []
        for _ in range(3):
            with urllib.request.urlopen(f"{base}/metrics", timeout=5) as answer:
                scrapes.append(samples(answer.read().decode()))
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert [scraped[HEALTH] for scraped in scrapes] == [30, 30, 30]
