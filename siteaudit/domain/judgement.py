"""What the checks judge pages by that is not a setting: fixed word lists, phrases, crawler names and the
near-duplicate sketch's shape. The adapters that gather the facts import them from here (unlike
`Thresholds`, none of it is configurable or reported in the stats)."""

import re
from typing import Final

# Link texts that say nothing of their target (`non_descriptive_anchor`), compared after lower-casing,
# collapsing whitespace and trimming ANCHOR_PUNCTUATION around the text.
GENERIC_ANCHORS: Final = frozenset(
    {
        "click here",
        "click",
        "here",
        "click this",
        "read more",
        "more",
        "learn more",
        "find out more",
        "more info",
        "more information",
        "see more",
        "view more",
        "continue",
        "continue reading",
        "details",
        "link",
        "this",
        "this link",
        "this page",
        "go",
        "start",
        "right here",
        "page",
        "website",
        "download",
    }
)
ANCHOR_PUNCTUATION: Final = " \t\n.,:;!?…→»«>-–—|()[]\"'"

# "Not found" phrases of soft-404 pages, each behind a literal that must occur first: a plain substring
# test is much cheaper than running the patterns over every page's text. Each pattern starts with a
# literal (lookbehinds moved after it), so that the regex engine scans for that literal instead of
# trying the whole alternation at every position: about ten times faster.
NOT_FOUND_PHRASES: Final[tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]] = (
    (
        "found",
        (
            re.compile(
                r"n(?:ot(?<![a-z]not)\s+(?:be\s+)?found|ot(?<=cannot)\s+be\s+found"
                r"|othing\s+(?:was\s+)?found|'t\s+be\s+found|’t\s+be\s+found)"
            ),
        ),
    ),
    ("404", (re.compile(r"error\s*404(?![0-9])"), re.compile(r"404(?<![0-9]404)\s*(?:error|page)"))),
    (
        "exist",
        (
            re.compile(r"does(?:\s+not|n't|n’t)\s+exists?(?![a-z])"),
            re.compile(r"no\s+longer\s+exists?(?![a-z])"),
        ),
    ),
    ("no longer available", (re.compile(r"no longer available"),)),
    (
        "looking for",
        (re.compile(r"(?:page|url|content)\s+you(?:\s+are|\s+were|'re|’re)?\s+looking\s+for"),),
    ),
    ("gefunden", (re.compile(r"nicht\s+gefunden"),)),
    ("encontrad", (re.compile(r"no\s+encontrad|não\s+encontrad"),)),
    ("introuvable", (re.compile(r"introuvable"),)),
    ("trovat", (re.compile(r"non\s+trovat"),)),
    ("gevonden", (re.compile(r"niet\s+gevonden"),)),
)


def has_not_found_phrase(text: str) -> bool:
    """Whether lower-cased `text` says that what was asked for does not exist (soft-404 wording)."""
    return any(
        key in text and any(pattern.search(text) for pattern in patterns)
        for key, patterns in NOT_FOUND_PHRASES
    )


# Crawlers that gather text for AI models or answers (`ai_crawler_blocked`), as robots.txt names them.
AI_CRAWLERS: Final[tuple[str, ...]] = (
    "GPTBot",
    "ChatGPT-User",
    "OAI-SearchBot",
    "CCBot",
    "ClaudeBot",
    "Claude-Web",
    "anthropic-ai",
    "Google-Extended",
    "PerplexityBot",
    "Bytespider",
    "Applebot-Extended",
    "Meta-ExternalAgent",
    "Amazonbot",
    "cohere-ai",
)

# Google reads only the first 500 KiB of a robots.txt; what follows is ignored, by it and by us.
ROBOTS_TXT_READ_BYTES: Final = 500 * 1024

# The sitemaps.org limits of one sitemap file (`sitemap_invalid` beyond them).
SITEMAP_MAX_URLS: Final = 50_000
SITEMAP_MAX_BYTES: Final = 50 * 1024 * 1024  # uncompressed

# The near-duplicate sketch (`duplicate_content_near`): a MinHash of SKETCH_BINS values (a power of two)
# over shingles of SHINGLE_WORDS words of the visible text. Fixed, so that sketches from different
# processes and audits are comparable; `Thresholds.near_duplicate_band_rows` splits it into bands.
SKETCH_BINS: Final = 128
SHINGLE_WORDS: Final = 5
