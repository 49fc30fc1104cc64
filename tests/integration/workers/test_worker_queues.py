"""`siteaudit worker --queues`: workers that only crawl and workers that only finalise, on RabbitMQ and
PostgreSQL (docs/operations.md "Workers for finalisation"). A finalise-only worker leaves crawling to the
others, a crawl-only worker leaves finalisation to the others, and together they take an audit to done."""

import os
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest
from worker_doubles import SiteServer, make_api, wait_until

from tests.local_sites import UNPACED_LOCAL_ENV

pytestmark = [pytest.mark.postgres, pytest.mark.rabbitmq]


class Worker:
    """One `siteaudit worker --queues ...` process, its output in a log file of its own."""

    def __init__(self, env: dict[str, str], queues: str, log: Path) -> None:
        self.log = log
        self._output: IO[bytes] = open(log, "wb")  # noqa: SIM115 - closed in stop()
        command = [sys.executable, "-c", "from siteaudit.entrypoints.cli import main; main()"]
        self.process = subprocess.Popen(
            [*command, "worker", "--queues", queues], env=env, stdout=self._output, stderr=self._output
        )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._output.close()


def test_a_finalise_only_worker_finalises_what_a_crawl_only_worker_crawled_and_neither_does_the_others_work(
    database_url: str, rabbitmq_url: str, queue_prefix: str, secret_key: str, site: SiteServer, tmp_path: Path
) -> None:
    api = make_api(
        database_url=database_url, broker_url=rabbitmq_url, secret_key=secret_key, prefix=queue_prefix
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SITEAUDIT_")},
        **UNPACED_LOCAL_ENV,
        "SITEAUDIT_DATABASE_URL": database_url,
        "SITEAUDIT_BROKER_URL": rabbitmq_url,
        "SITEAUDIT_QUEUE_PREFIX": queue_prefix,
        "SITEAUDIT_SECRET_KEY": secret_key,
        "SITEAUDIT_ALLOW_NETWORKS": "127.0.0.0/8",
        "SITEAUDIT_WORKER_THREADS": "2",
        "SITEAUDIT_SLICE_PAGES": "2",
        "SITEAUDIT_LOG_LEVEL": "info",
    }

    def start_audit() -> int:
        answer = api.client.simulate_post(
            "/v1/crawls", json={"url": site.url, "max_pages": 20}, headers=api.auth()
        )
        assert answer.status_code == 202, answer.text
        return int(answer.json["crawl_id"])

    def progress(crawl_id: int) -> tuple[str, int]:
        audit = api.client.simulate_get(f"/v1/crawls/{crawl_id}", headers=api.auth()).json
        return str(audit["status"]), int(audit["pages_crawled"])

    workers: list[Worker] = []
    try:
        finaliser = Worker(env, "finalize", tmp_path / "finalize.log")
        workers.append(finaliser)
        first = start_audit()
        assert not wait_until(lambda: progress(first)[1] > 0 or site.hits > 0, timeout_s=4), finaliser.text()
        assert progress(first) == ("queued", 0)  # the crawl waits for a worker that takes the crawl queue

        crawler = Worker(env, "crawl,webhooks", tmp_path / "crawl.log")
        workers.append(crawler)
        assert wait_until(lambda: progress(first)[0] == "done", timeout_s=60), (
            crawler.text() + finaliser.text()
        )
        assert progress(first)[1] == 5
        ended = f"audit {first} ended: done"
        assert ended in finaliser.text() and ended not in crawler.text()

        finaliser.stop()
        second = start_audit()
        assert wait_until(lambda: progress(second)[0] == "finalizing", timeout_s=60), crawler.text()
        assert not wait_until(lambda: progress(second)[0] != "finalizing", timeout_s=4)
        assert progress(second) == ("finalizing", 5)  # crawled, and left to a worker that finalises

        other = Worker(env, "finalize", tmp_path / "finalize-2.log")
        workers.append(other)
        assert wait_until(lambda: progress(second)[0] == "done", timeout_s=60), other.text()
        assert f"audit {second} ended: done" in other.text()
        assert "ended: done" not in crawler.text()
    finally:
        for worker in workers:
            if worker.process.poll() is None:
                worker.stop()
