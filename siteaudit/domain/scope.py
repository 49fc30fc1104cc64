"""What an audit covers (docs/audits.md): the whole site from its start URL, a list of URLs, or what the
sitemaps list; which URLs of the site it keeps (include and exclude patterns); and how it treats query
strings (drop them, keep the listed parameters, keep them all).

Pure decisions over values: the crawl engine asks `ScopeRules.applied` of every URL it would queue, and
`AuditScope` says where the frontier starts and whether links are followed.

Patterns are matched against a URL's path with its query (`/shop/item?id=1`), never its origin:

- without `*`, a pattern starting with `/` is a path prefix (`/blog` keeps `/blog`, `/blog/` and
  `/blogroll`; `/blog/` keeps only what is under it);
- with `*`, it is a glob over the whole path and query: `*` is any run of characters, `/` included;
  every other character is itself (`?` is the query's, not a wildcard).

A URL is kept when no exclude pattern matches it and, when there are include patterns, one of them does.
"""

import enum
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Final, Self
from urllib.parse import unquote, urlsplit

from attrs import frozen

MAX_PATTERNS: Final = 20  # include patterns, and as many exclude patterns
MAX_PATTERN_CHARS: Final = 200
MAX_KEEP_PARAMS: Final = 20
MAX_PARAM_CHARS: Final = 100
MAX_LISTED_URLS: Final = 1_000  # a list audit's URLs, also bounded by the plan's page cap and max_pages
PATTERN_REGEX: Final = r"^[/*][!-~]{0,199}$"  # printable ASCII, no space: what JSON Schema can say
PARAM_REGEX: Final = r"^[A-Za-z0-9_.\[\]-]{1,100}$"
_PATTERN: Final = re.compile(PATTERN_REGEX)
_PARAM: Final = re.compile(PARAM_REGEX)


class QueryParams(enum.StrEnum):
    """What the crawl does with a URL's query string before it queues the URL."""

    DROP = "drop"  # every query string removed: /p?id=1 is /p
    KEEP_LISTED = "keep_listed"  # only the parameters named in keep_params kept, in their order
    KEEP = "keep"  # as found (the default)


def is_glob(pattern: str) -> bool:
    return "*" in pattern


@lru_cache(maxsize=1024)
def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def pattern_matches(pattern: str, target: str) -> bool:
    """Whether `pattern` matches `target`, a URL's path with its query (see the module's docstring)."""
    if is_glob(pattern):
        return _glob(pattern).fullmatch(target) is not None
    return target.startswith(pattern)


def path_and_query(url: str) -> str:
    """The part of a URL the patterns are matched against: its path (at least `/`) and its query."""
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{path}?{parts.query}" if parts.query else path


def with_query(url: str, mode: QueryParams, keep: Sequence[str] = ()) -> str:
    """`url` with its query string treated as `mode` says (its fragment, if any, kept as it was)."""
    if mode is QueryParams.KEEP or "?" not in url:
        return url
    head, _, rest = url.partition("?")
    query, hash_, fragment = rest.partition("#")
    kept = ""
    if mode is QueryParams.KEEP_LISTED:
        wanted = frozenset(keep)
        pairs = [p for p in query.split("&") if p and _param_name(p) in wanted]
        kept = "&".join(pairs)
    return head + (f"?{kept}" if kept else "") + hash_ + fragment


def _param_name(pair: str) -> str:
    return unquote(pair.partition("=")[0].replace("+", " "))


@frozen
class ScopeRules:
    """Which URLs of the site an audit keeps, and how their queries are treated. A site saves these for
    its audits; an audit may give its own instead."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    query_params: QueryParams = QueryParams.KEEP
    keep_params: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self == EVERY_URL

    def admits(self, url: str) -> bool:
        """Whether the patterns keep `url` (every URL when there are none)."""
        if not self.include and not self.exclude:
            return True
        target = path_and_query(url)
        if any(pattern_matches(p, target) for p in self.exclude):
            return False
        return not self.include or any(pattern_matches(p, target) for p in self.include)

    def normalised(self, url: str) -> str:
        return with_query(url, self.query_params, self.keep_params)

    def applied(self, url: str) -> str | None:
        """The URL the crawl queues for `url` (its query treated), or None when the patterns leave it out.
        The patterns judge the URL as queued, after its query was treated."""
        queued = self.normalised(url)
        return queued if self.admits(queued) else None

    def faults(self) -> dict[str, str]:
        """What is wrong with these rules, by input name (`include[2]`, `keep_params`, ...)."""
        bad: dict[str, str] = {}
        for name, patterns in (("include", self.include), ("exclude", self.exclude)):
            bad.update(_pattern_faults(name, patterns))
        if len(self.keep_params) > MAX_KEEP_PARAMS:
            bad["keep_params"] = f"at most {MAX_KEEP_PARAMS} parameter names"
        else:
            for i, name in enumerate(self.keep_params):
                if not _PARAM.fullmatch(name):
                    bad[f"keep_params[{i}]"] = (
                        f"must be 1-{MAX_PARAM_CHARS} characters from A-Z a-z 0-9 _ . - [ ]"
                    )
        if self.query_params is QueryParams.KEEP_LISTED and not self.keep_params and "keep_params" not in bad:
            bad["keep_params"] = "query_params keep_listed needs the names of the parameters to keep"
        if self.query_params is not QueryParams.KEEP_LISTED and self.keep_params:
            bad["keep_params"] = "only read with query_params keep_listed"
        return bad

    def as_json(self) -> dict[str, Any]:
        return {
            "include": list(self.include),
            "exclude": list(self.exclude),
            "query_params": self.query_params.value,
            "keep_params": list(self.keep_params),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Self:
        if not data:
            return cls()
        return cls(
            include=tuple(data.get("include", ())),
            exclude=tuple(data.get("exclude", ())),
            query_params=QueryParams(data.get("query_params", QueryParams.KEEP.value)),
            keep_params=tuple(data.get("keep_params", ())),
        )


EVERY_URL: Final = ScopeRules()  # no patterns, queries kept: what an audit keeps unless told


def _pattern_faults(name: str, patterns: Sequence[str]) -> dict[str, str]:
    if len(patterns) > MAX_PATTERNS:
        return {name: f"at most {MAX_PATTERNS} patterns"}
    bad: dict[str, str] = {}
    for i, pattern in enumerate(patterns):
        if not _PATTERN.fullmatch(pattern):
            bad[f"{name}[{i}]"] = (
                f"must be 1-{MAX_PATTERN_CHARS} printable characters without spaces, starting with / (a "
                "path prefix) or * (a glob)"
            )
    return bad


class ScopeMode(enum.StrEnum):
    """Where an audit's frontier starts, and whether it follows links."""

    CRAWL = "crawl"  # the start URL, links followed, sitemap URLs no link reached at the end
    LIST = "list"  # exactly the listed URLs, nothing followed
    SITEMAP = "sitemap"  # what the sitemaps list, nothing followed


@frozen
class AuditScope:
    """What one audit covers: `urls` (a list audit), `sitemap_only`, or neither (the whole site), with
    the `rules` it applies. A list audit audits its URLs as listed: the rules are empty."""

    urls: tuple[str, ...] = ()
    sitemap_only: bool = False
    rules: ScopeRules = EVERY_URL

    @property
    def mode(self) -> ScopeMode:
        if self.urls:
            return ScopeMode.LIST
        return ScopeMode.SITEMAP if self.sitemap_only else ScopeMode.CRAWL

    @property
    def follows(self) -> bool:
        """Whether the audit follows links (and so adopts a start URL's redirect to its `www.` twin)."""
        return self.mode is ScopeMode.CRAWL

    def as_json(self) -> dict[str, Any] | None:
        """The stored form; None for the whole site with no rules (what every older audit is)."""
        if self == WHOLE_SITE:
            return None
        return {"urls": list(self.urls), "sitemap_only": self.sitemap_only, **self.rules.as_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Self:
        if not data:
            return cls()
        return cls(
            urls=tuple(data.get("urls", ())),
            sitemap_only=bool(data.get("sitemap_only", False)),
            rules=ScopeRules.from_json(data),
        )


WHOLE_SITE: Final = AuditScope()  # what every audit covered before scopes existed


__all__ = [
    "EVERY_URL",
    "MAX_LISTED_URLS",
    "WHOLE_SITE",
    "AuditScope",
    "QueryParams",
    "ScopeMode",
    "ScopeRules",
    "pattern_matches",
    "with_query",
]
