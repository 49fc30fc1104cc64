"""The benchmark harnesses that `make bench-smoke` (CI) runs must not depend on the machine's speed: what
they read from /proc may vanish under them, and a kill mid-crawl must land however fast the crawl is
(benchmarks/README.md, smoke.py)."""

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.crawl_e2e import children_cpu_s

ROOT = Path(__file__).resolve().parents[3]

# A process whose threads start and end all the time, as the stdlib server's one thread per connection.
CHURN = """
import threading
while True:
    threads = [threading.Thread(target=lambda: None) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
"""


@pytest.fixture
def churning() -> Iterator[int]:
    process = subprocess.Popen([sys.executable, "-c", CHURN])
    try:
        time.sleep(0.3)
        yield process.pid
    finally:
        process.kill()
        process.wait()


def test_the_server_cpu_is_read_while_its_threads_come_and_go(churning: int) -> None:
    # Thousands of reads: a thread listed under /proc/PID/task that ends before its `children` file is
    # read used to raise FileNotFoundError (a few times in a thousand reads).
    for _ in range(20_000):
        assert children_cpu_s(churning) >= 0.0


def test_the_cpu_of_a_process_gone_reads_as_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    assert children_cpu_s(int(done.stdout)) == 0.0


def _get(port: int, path: str, timeout: float = 30) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


@pytest.fixture
def held_site(tmp_path: Path) -> Iterator[int]:
    """scale_audit's site of 40 URLs holding its page answers after 5 page requests."""
    command = [sys.executable, str(ROOT / "benchmarks" / "scale_audit.py"), "--serve-site", "40"]
    command += ["--token-file", str(tmp_path / "token.txt"), "--hold-at", "5"]
    site = subprocess.Popen(
        command, stdout=subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    try:
        assert site.stdout is not None
        yield int(site.stdout.readline())
    finally:
        site.kill()
        site.wait()


def test_the_scale_site_holds_its_pages_at_a_kill_point_until_released(held_site: int) -> None:
    port = held_site
    assert _get(port, "/robots.txt")[0] == 200  # the host files are never held
    for number in range(5):
        assert _get(port, f"/product/{number}")[0] == 200
    sixth: list[int] = []
    waiting = threading.Thread(target=lambda: sixth.append(_get(port, "/product/5")[0]))
    waiting.start()
    deadline = time.monotonic() + 30
    while json.loads(_get(port, "/.bench/holds")[1])["waiting"] != [1]:
        assert time.monotonic() < deadline, "the sixth page request was not held"
        time.sleep(0.05)
    assert not sixth  # held: the benchmark kills the worker now, with the crawl still short of this page
    assert _get(port, "/robots.txt")[0] == 200
    assert _get(port, "/.bench/release/0")[0] == 200
    waiting.join(timeout=30)
    assert sixth == [200]
    assert _get(port, "/product/6")[0] == 200  # released for good
    assert json.loads(_get(port, "/.bench/holds")[1])["waiting"] == [0]


def test_two_crawl_memory_runs_at_once_keep_to_their_own_database() -> None:
    # bench-smoke runs crawl_memory on its default SQLite database; CI jobs and other checkouts on the
    # same machine run it at the same time. One fixed file for all made a run remove and rewrite another's.
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "crawl_memory.py"),
        "--urls",
        "600",
        "--slice-pages",
        "200",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for _ in range(2)
    ]
    outputs = [run.communicate(timeout=300)[0].decode() for run in runs]
    for run, output in zip(runs, outputs, strict=True):
        assert run.returncode == 0, output
        assert "frontier counters equal a count of the rows" in output
