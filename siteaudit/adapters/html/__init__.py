"""HTML parsing: bytes of a fetched page into the facts the checks judge."""

from siteaudit.adapters.html.extract import (
    extract_html_facts,
    extract_page_facts,
    parse_content_type,
    parse_link_header,
    x_robots_directives,
)

__all__ = [
    "extract_html_facts",
    "extract_page_facts",
    "parse_content_type",
    "parse_link_header",
    "x_robots_directives",
]
