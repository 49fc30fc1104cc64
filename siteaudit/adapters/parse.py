"""LibraryPageParser: the PageParser port over selectolax, w3lib, protego, lxml and ada-url."""

from collections.abc import Mapping, Sequence
from typing import Unpack

from siteaudit.adapters.html.extract import extract_page_facts
from siteaudit.adapters.html.rules import compiled, rule_errors
from siteaudit.adapters.robots import robots_from_response
from siteaudit.adapters.sitemap import parse_sitemap
from siteaudit.adapters.url import DEFAULT_POLICY, ParameterPolicy, normalise
from siteaudit.domain.extraction import ExtractionRule
from siteaudit.domain.facts import FetchError, PageFacts
from siteaudit.ports.parse import FinalResponse, RobotsReading


class LibraryPageParser:
    def __init__(self, policy: ParameterPolicy = DEFAULT_POLICY) -> None:
        self.policy = policy

    def page_facts(
        self, *, extract: tuple[ExtractionRule, ...] = (), **response: Unpack[FinalResponse]
    ) -> PageFacts:
        return extract_page_facts(
            **response, policy=self.policy, rules=compiled(extract) if extract else None
        )

    def rule_errors(self, rules: Sequence[ExtractionRule]) -> Mapping[int, str]:
        return rule_errors(rules)

    def robots(
        self, *, url: str, status_code: int | None, body: bytes = b"", fetch_error: FetchError | None = None
    ) -> RobotsReading:
        parsed = robots_from_response(url=url, status_code=status_code, body=body, fetch_error=fetch_error)
        return RobotsReading(facts=parsed.facts, rules=parsed.rules)

    sitemap = staticmethod(parse_sitemap)  # the port's reading is what the parser returns

    def normalise(self, url: str, base: str | None = None) -> str | None:
        return normalise(url, base, policy=self.policy)
