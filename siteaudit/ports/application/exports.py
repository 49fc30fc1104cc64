"""An audit's rows streamed to a file (`Exports`): the REST export and the app's downloads."""

import enum
from collections.abc import Iterator
from typing import Protocol

from siteaudit.domain.account import Caller
from siteaudit.domain.ids import AuditId
from siteaudit.domain.issue import Issue
from siteaudit.ports.crawl import LinkLine, PageRow


class ExportKind(enum.StrEnum):
    """Which rows of an audit an export streams (`Application.export_rows`)."""

    PAGES = "pages"  # `PageRow`s, by URL id
    ISSUES = "issues"  # `Issue`s, in writing order
    LINKS = "links"  # `LinkLine`s, by source


# One row of an export: a `PageRow`, an `Issue` or a `LinkLine`, as `ExportKind` says.
ExportRow = PageRow | Issue | LinkLine


class Exports(Protocol):
    """An audit's rows streamed to a file: the REST export and the app's downloads."""

    def export_rows(self, audit_id: AuditId, kind: ExportKind, caller: Caller) -> Iterator[ExportRow]:
        """Every row of one kind of the audit, read from the crawl store in batches (memory stays
        bounded however large the audit). The audit is checked before this returns: raises NotFound
        (another team's audit) or CrawlArchived. Exhaust or close the iterator: it holds a database
        connection until then."""
        ...
