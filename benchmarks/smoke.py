"""Keep the benchmarks alive: run every one at a tiny size (seconds each) and check that it completes and
prints its figures. Timings are never asserted: a busy CI machine may be as slow as it likes.

    .venv/bin/python benchmarks/smoke.py [name ...]     # `make bench-smoke`, also run by `.ci/run`

The corpus benchmarks read a small generated site (index.html and 30 linked pages) instead of the Python
documentation; the PostgreSQL ones make and drop their own databases as usual. A benchmark whose outside
tool is missing (`wrk` for `rest`) is reported as skipped, with the way to install it, unless
`--require-all` (then it fails). Exit status: 1 when any benchmark failed or printed no figures.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from attrs import frozen

HERE = Path(__file__).resolve().parent
TIMEOUT_S = 1200  # per benchmark: only a hang should ever meet it (the longest take about 1-2 minutes)


@frozen
class Smoke:
    name: str
    args: tuple[str, ...]
    figures: tuple[str, ...]  # patterns its output must hold (the lines that carry its figures)
    needs: str = ""  # an outside program, or ""
    install: str = ""


def smokes(corpus: Path) -> list[Smoke]:
    c = str(corpus)
    return [
        Smoke(
            "crawl_checks",
            ("--corpus", c, "--rounds", "1"),
            (r"checks pass: .* pages/s", r"ratio checks/bare"),
        ),
        Smoke(
            "crawl_fetch",
            ("--corpus", c, "--rounds", "1"),
            (r"crawler fetch path: *[\d.]+ pages/s", r"ratio"),
        ),
        Smoke(
            "crawl_e2e",
            ("--corpus", c, "--rounds", "1", "--server", "stdlib"),
            (
                r"ours \(crawl slices into PostgreSQL\) +[\d.]+ pages/s",
                r"CPU per page, ours",
                "all rounds complete",
            ),
        ),
        Smoke(
            "crawl_memory",
            ("--urls", "3000", "--slice-pages", "500"),
            (r"peak RSS \d+ MB", r"first slice \d+ pages/s, last slice \d+ pages/s", "counters equal"),
        ),
        Smoke("bulk_rows", ("--pages", "500"), (r"pages\+issues .* ratio", r"bytes/row")),
        Smoke("finalize", ("--pages", "500", "--links-per-page", "6"), (r"finalize_audit", r"\d+(\.\d+)? s")),
        Smoke(
            "list_depth",
            ("--pages", "400", "--rounds", "2", "--other-audits", "2", "--old-template-predicate"),
            (r"issues +[\d,]+ +last", r"worst list page p99", r"old test +[\d,]+ +last"),
        ),
        Smoke(
            "rest",
            ("--seconds", "1", "--pages", "60", "--keys", "100", "--connections", "4", "--workers", "2"),
            (r"siteaudit +/v1/crawls/\{id\} +\d+ req/s +p99", r"of bare-psycopg"),
            needs="wrk",
            install="apt-get install wrk",
        ),
        Smoke(
            "worker_capacity",
            ("--smoke",),
            (
                r"aggregate +[\d.]+ pages/s",
                r"worker CPU",
                r"RSS",
                r"K=1 N= +2 at max_rps 3: aggregate",
                r"worker RSS",
            ),
        ),
        Smoke(
            "render",
            ("--pages", "8", "--tabs", "2"),
            (
                r"bare Playwright loop +[\d.]+ pages/s",
                r"CPU per page, ours",
                r"peak browser RSS",
                r"ratio ours/bare",
            ),
            needs="chromium",
            install="apt-get install chromium",
        ),
        Smoke(
            "scale_audit",
            ("--smoke",),
            (
                r"wall [\d.]+ s .* pages/s",
                r"CPU per page: service",
                r"report +\d+ requests .* p99",
                "check ok",
            ),
        ),
    ]


def write_corpus(root: Path, pages: int = 30) -> None:
    """A small site: index.html links every page; each page links home, its neighbours and an image."""
    root.mkdir(parents=True, exist_ok=True)

    def page(title: str, body: str) -> str:
        return (
            f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>"
            f"<meta name=description content='{title}, a page of the smoke corpus.'></head>"
            f"<body><h1>{title}</h1>{body}</body></html>"
        )

    links = "".join(f'<li><a href="page-{n}.html">Page {n}</a></li>' for n in range(1, pages + 1))
    (root / "index.html").write_text(page("Smoke corpus", f"<ul>{links}</ul>"))
    words = " ".join(f"clock{n % 37}" for n in range(400))
    for n in range(1, pages + 1):
        nearby = "".join(f'<a href="page-{m}.html">Page {m}</a> ' for m in (n - 1, n + 1) if 1 <= m <= pages)
        body = (
            f'<p>{words}</p><p>{nearby}<a href="index.html">Home</a></p><img src="clock.png" alt="A clock">'
        )
        (root / f"page-{n}.html").write_text(page(f"Page {n} of the smoke corpus", body))


def run(smoke: Smoke, *, require_all: bool) -> str:
    """'ok', 'skipped' or 'FAILED', after printing the benchmark's output."""
    print(f"\n=== {smoke.name} {' '.join(smoke.args)} ===", flush=True)
    if smoke.needs and shutil.which(smoke.needs) is None:
        print(f"{smoke.needs} is not installed ({smoke.install})")
        return "FAILED" if require_all else "skipped"
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / f"{smoke.name}.py"), *smoke.args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")])),
            },
        )
    except subprocess.TimeoutExpired as expired:
        print(expired.stdout or "", expired.stderr or "")
        print(f"--- {smoke.name}: no answer in {TIMEOUT_S} s")
        return "FAILED"
    output = done.stdout + done.stderr
    print(output.rstrip())
    lacking = [pattern for pattern in smoke.figures if re.search(pattern, done.stdout) is None]
    verdict = "ok" if done.returncode == 0 and not lacking else "FAILED"
    why = f"exit {done.returncode}" + (f", no figures matching {lacking}" if lacking else "")
    print(f"--- {smoke.name}: {verdict} ({why}) in {time.perf_counter() - started:.0f} s", flush=True)
    return verdict


def main() -> int:
    options = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    options.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    options.add_argument("--require-all", action="store_true", help="a missing outside tool fails the run")
    args = options.parse_args()
    with tempfile.TemporaryDirectory(prefix="siteaudit-smoke-") as tmp:
        corpus = Path(tmp, "corpus")
        write_corpus(corpus)
        chosen = [s for s in smokes(corpus) if not args.names or s.name in args.names]
        unknown = set(args.names) - {s.name for s in chosen}
        if unknown:
            options.error(f"no such benchmark: {', '.join(sorted(unknown))}")
        verdicts = {smoke.name: run(smoke, require_all=args.require_all) for smoke in chosen}
    print("\nbench-smoke: " + ", ".join(f"{name} {verdict}" for name, verdict in verdicts.items()))
    return 1 if "FAILED" in verdicts.values() else 0


if __name__ == "__main__":
    sys.exit(main())
