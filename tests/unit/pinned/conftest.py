"""The pinned tests crawl the golden audit's scripted site, whose doubles live beside the golden tests in
tests/integration/crawl (imported there by file name): that folder is made importable here the same way."""

import sys
from pathlib import Path

CRAWL_TESTS = str(Path(__file__).resolve().parents[2] / "integration" / "crawl")
if CRAWL_TESTS not in sys.path:
    sys.path.append(CRAWL_TESTS)
