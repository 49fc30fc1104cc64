"""robots.txt: the facts the checks judge, and the rules the crawler obeys (RFC 9309 matching by protego)."""

from typing import Final

from attrs import frozen
from protego import Protego

from siteaudit.adapters.url import ParameterPolicy, normalise
from siteaudit.domain.facts import FetchError, RobotsFacts
from siteaudit.domain.judgement import AI_CRAWLERS, ROBOTS_TXT_READ_BYTES

MAX_INVALID_LINES: Final = 100
_INVALID_LINE_CHARS: Final = 200
_GROUP_RULES: Final = frozenset(
    {"allow", "disallow", "crawl-delay", "request-rate", "visit-time", "clean-param"}
)
_OTHER_KNOWN: Final = frozenset({"user-agent", "sitemap", "host"})
_WHOLE_SITE: Final = frozenset({"/", "/*"})
_KEEP_ALL = ParameterPolicy.keep_all()


@frozen
class RobotsRules:
    """What the crawler may fetch. `parser` None means allow all or disallow all, per `allow_all`."""

    parser: Protego | None = None
    allow_all: bool = True

    def can_fetch(self, url: str, user_agent: str) -> bool:
        if self.parser is None:
            return self.allow_all
        return bool(self.parser.can_fetch(url, user_agent))

    def crawl_delay(self, user_agent: str) -> float | None:
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(user_agent)
        return None if delay is None else float(delay)


@frozen
class ParsedRobots:
    facts: RobotsFacts
    rules: RobotsRules

    def can_fetch(self, url: str, user_agent: str) -> bool:
        return self.rules.can_fetch(url, user_agent)

    def crawl_delay(self, user_agent: str) -> float | None:
        return self.rules.crawl_delay(user_agent)


@frozen
class _Scan:
    rules_by_agent: dict[str, list[tuple[str, str]]]
    invalid_lines: tuple[str, ...]
    sitemaps: tuple[str, ...]


def _product_token(agent: str) -> str:
    return agent.split("/", 1)[0].strip().lower()


def _scan(text: str, base_url: str) -> _Scan:
    """Group structure, unknown lines and sitemaps, read the way RFC 9309 groups lines."""
    rules_by_agent: dict[str, list[tuple[str, str]]] = {}
    invalid: list[str] = []
    sitemaps: list[str] = []
    agents: list[str] = []
    in_agent_lines = False
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, colon, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if not colon or (key not in _GROUP_RULES and key not in _OTHER_KNOWN):
            if len(invalid) < MAX_INVALID_LINES:
                invalid.append(raw.strip()[:_INVALID_LINE_CHARS])
            continue
        if key == "user-agent":
            if not in_agent_lines:
                agents = []
            agents.append(_product_token(value))
            in_agent_lines = True
            continue
        in_agent_lines = False
        if key == "sitemap":
            resolved = normalise(value, base_url, policy=_KEEP_ALL)
            if resolved is not None:
                sitemaps.append(resolved)
        elif key in _GROUP_RULES:
            if not agents:
                # A rule before any user-agent line belongs to no group: crawlers drop it.
                if len(invalid) < MAX_INVALID_LINES:
                    invalid.append(raw.strip()[:_INVALID_LINE_CHARS])
                continue
            for agent in agents:
                rules_by_agent.setdefault(agent, []).append((key, value))
    return _Scan(rules_by_agent=rules_by_agent, invalid_lines=tuple(invalid), sitemaps=tuple(sitemaps))


def _disallows_everything(rules: list[tuple[str, str]]) -> bool:
    disallow_root = any(key == "disallow" and value in _WHOLE_SITE for key, value in rules)
    any_allow = any(key == "allow" and value for key, value in rules)
    return disallow_root and not any_allow


def parse_robots(body: bytes, *, url: str, status_code: int | None = 200) -> ParsedRobots:
    """Parse a fetched robots.txt (the first 500 KiB of it)."""
    text = body[:ROBOTS_TXT_READ_BYTES].decode("utf-8-sig", errors="replace")
    scan = _scan(text, url)
    parser = Protego.parse(text)
    disallow_all = tuple(
        agent
        for agent in ("*", "googlebot")
        if agent in scan.rules_by_agent and _disallows_everything(scan.rules_by_agent[agent])
    )
    root = normalise("/", url, policy=_KEEP_ALL) or url
    ai_blocked = tuple(bot for bot in AI_CRAWLERS if not parser.can_fetch(root, bot))
    facts = RobotsFacts(
        status_code=status_code,
        bytes=len(body),
        disallow_all_groups=disallow_all,
        invalid_lines=scan.invalid_lines,
        sitemaps=scan.sitemaps,
        ai_crawlers_blocked=ai_blocked,
    )
    return ParsedRobots(facts=facts, rules=RobotsRules(parser=parser))


def robots_from_response(
    *,
    url: str,
    status_code: int | None,
    body: bytes = b"",
    fetch_error: FetchError | None = None,
) -> ParsedRobots:
    """RFC 9309 outcome of fetching robots.txt: 2xx parsed; 4xx (but 429) allow all; else disallow all.

    The fetcher has already followed redirects; `status_code` is the final one.
    """
    if fetch_error is None and status_code is not None and 200 <= status_code < 300:
        return parse_robots(body, url=url, status_code=status_code)
    unavailable = status_code is not None and 400 <= status_code < 500 and status_code != 429
    facts = RobotsFacts(status_code=status_code, fetch_error=fetch_error, bytes=len(body))
    return ParsedRobots(facts=facts, rules=RobotsRules(parser=None, allow_all=unavailable))
