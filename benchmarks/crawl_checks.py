"""Benchmark: the crawl-time checks pass against bare selectolax parsing, on one core, same pages.

    .venv/bin/python benchmarks/crawl_checks.py [--corpus /usr/share/doc/python3.11/html] [--rounds 3]
        [--profile]

The checks pass is what a crawl slice does with each fetched HTML body: decode (w3lib), parse (Lexbor),
read the page facts, resolve and normalise links, detect firewalls, and run every page-level check.
The baseline is `LexborHTMLParser(body)` alone. Corpus: the Python documentation's HTML
(`apt-get install python3.11-doc`); any directory of .html files will do.
"""

import argparse
import cProfile
import os
import pathlib
import pstats
import sys
import time

from selectolax.lexbor import LexborHTMLParser

from siteaudit.adapters.parse import LibraryPageParser
from siteaudit.domain.checks.page import PageContext, check_page

ORIGIN = "https://docs.retro-clock.example"
RATIO_TARGET = 0.33


def load(corpus: pathlib.Path) -> list[tuple[str, bytes]]:
    pages = []
    for path in sorted(corpus.rglob("*.html")):
        url = f"{ORIGIN}/{path.relative_to(corpus).as_posix()}"
        pages.append((url, path.read_bytes()))
    return pages


def bare(pages: list[tuple[str, bytes]]) -> float:
    started = time.process_time()
    for _url, body in pages:
        LexborHTMLParser(body)
    return time.process_time() - started


def checks(pages: list[tuple[str, bytes]]) -> tuple[float, int]:
    parser = LibraryPageParser()
    context = PageContext(start_url=ORIGIN + "/")
    headers = (("content-type", "text/html"),)
    issues = 0
    started = time.process_time()
    for url, body in pages:
        facts = parser.page_facts(url=url, status=200, headers=headers, body=body, origin=ORIGIN)
        issues += len(check_page(facts, context=context))
    return time.process_time() - started, issues


def profiled(pages: list[tuple[str, bytes]]) -> None:
    """One more checks pass under cProfile in process time: the listing, and /tmp/crawl_checks.prof.
    The profiler's cost per Python call skews the shares towards code that makes many calls."""
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    checks(pages)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
    profiler.dump_stats("/tmp/crawl_checks.prof")


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--corpus", default="/usr/share/doc/python3.11/html")
    options.add_argument("--rounds", type=int, default=3)
    options.add_argument("--profile", action="store_true", help="then profile one more checks pass")
    args = options.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    pages = load(pathlib.Path(args.corpus))
    if not pages:
        sys.exit(f"no .html files under {args.corpus}")
    size = sum(len(body) for _, body in pages)
    print(f"corpus: {len(pages)} pages, {size / 1e6:.1f} MB, mean {size / len(pages) / 1024:.0f} KB")
    checks(pages[:20])  # warm caches and imports
    bare_s = min(bare(pages) for _ in range(args.rounds))
    runs = [checks(pages) for _ in range(args.rounds)]
    checks_s, issues = min(runs)
    bare_rate, checks_rate = len(pages) / bare_s, len(pages) / checks_s
    print(f"bare selectolax parse:  {bare_rate:8.1f} pages/s  ({bare_s * 1000 / len(pages):.2f} ms/page CPU)")
    print(
        f"checks pass:            {checks_rate:8.1f} pages/s  ({checks_s * 1000 / len(pages):.2f} ms/page CPU)"
    )
    first_s = runs[0][0]  # URL answers are shared between pages and rounds: the first round is coldest
    print(
        f"  first round:          {len(pages) / first_s:8.1f} pages/s  ({first_s * 1000 / len(pages):.2f} ms/page CPU)"
    )
    print(f"issues found: {issues}")
    ratio = checks_rate / bare_rate
    print(
        f"ratio checks/bare: {ratio:.1%} (target >= {RATIO_TARGET:.0%}: {'ok' if ratio >= RATIO_TARGET else 'UNDER'})"
    )
    if args.profile:
        profiled(pages)


if __name__ == "__main__":
    main()
