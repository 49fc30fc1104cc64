"""What the console use cases answer beyond the domain's values (`domain/console_answers.py`,
`domain/triage.py`, shown as they are): one URL's answer, which carries the console facts under `gsc` and
its alias `sengine` (docs/rest-api.md "Renamed identifiers")."""

from attrs import frozen

from siteaudit.domain.console_answers import UrlConsole, UrlCrawl, UrlSearch


@frozen
class ConsoleUrlAnswer:
    """`GET /sites/{id}/gsc/url`: crawl facts, console facts (`gsc`, also as its alias `sengine`) and search
    figures of one URL of the site."""

    site_id: int
    demo: bool
    url: str
    crawl: UrlCrawl | None
    gsc: UrlConsole | None
    sengine: UrlConsole | None
    search: UrlSearch | None
