"""`GET /v1/crawls/{id}/export?kind=pages|issues|links&format=csv|jsonl`: an audit's rows as a file,
streamed from the crawl store (docs/app.md, "Reports")."""

import falcon

from siteaudit.adapters import export
from siteaudit.domain.ids import AuditId
from siteaudit.ports.application import Exports


class CrawlExport:
    def __init__(self, application: Exports) -> None:
        self.application = application

    def on_get(self, req: falcon.Request, resp: falcon.Response, crawl_id: int) -> None:
        kind, format = export.chosen(req.params)
        # Checked (team, archival) before the first byte: a refusal answers the error envelope.
        rows = self.application.export_rows(AuditId(crawl_id), kind, req.context.caller)
        resp.content_type = export.FORMATS[format][0]
        name = export.file_name(crawl_id, kind, format)
        resp.set_header("Content-Disposition", f'attachment; filename="{name}"')
        resp.set_header("Cache-Control", "no-store")
        resp.stream = export.pieces(kind, format, rows)
