"""Run every benchmark, one after another, each printing its own figures and ratios.

    .venv/bin/python benchmarks/run_all.py [name ...]

Benchmarks that need PostgreSQL expect it on 127.0.0.1:5432 (trust auth) and make their own database.
"""

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = [
    "crawl_checks",
    "crawl_fetch",
    "crawl_e2e",
    "crawl_memory",
    "bulk_rows",
    "finalize",
    "list_depth",
    "rest",
    "worker_capacity",
    "scale_audit",
    "render",
]


def main(names: list[str]) -> int:
    chosen = names or [name for name in ORDER if (HERE / f"{name}.py").exists()]
    failures = 0
    for name in chosen:
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(HERE / f"{name}.py")])
        print(f"--- {name}: exit {code} in {time.perf_counter() - started:.0f} s", flush=True)
        failures += code != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
