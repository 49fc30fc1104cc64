"""`siteaudit audit URL`: one audit in this process (in-memory database, inline crawl), then its report."""

from attrs import evolve
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.audit import AuditRequest, AuditStatus, AuditTrigger
from siteaudit.domain.report import Report, TemplateIssue
from siteaudit.settings import Settings


def run_audit(
    url: str,
    *,
    max_pages: int | None,
    max_rps: float | None,
    concurrency: int | None,
    verify_token: str | None,
    progress: bool,
) -> Report:
    settings = evolve(Settings.from_env(), database_url="memory://", slice_pages=50)
    application = bootstrap(settings, queue=MemoryTaskQueue()).application
    issued = application.ensure_local_owner(plan="scale", starting_credits=1_000_000)
    assert issued is not None
    caller = application.authenticate(issued.raw)
    request = AuditRequest(
        url=url,
        max_pages=max_pages,
        max_rps=max_rps,
        concurrency=concurrency,
        verify_token=verify_token,
        trigger=AuditTrigger.CI,
    )
    audit = application.start_audit(request, caller).audit
    console = Console(stderr=True)
    with Progress(
        TextColumn("[bold]auditing[/] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not progress,
        transient=True,
    ) as bar:
        task = bar.add_task(url, total=audit.max_pages)
        while True:
            crawled = application.run_crawl_slice(audit.id, verify_token=verify_token)
            bar.update(task, completed=crawled.pages_crawled)
            if crawled.next != "slice":
                break
    ended = application.finalize_audit(audit.id)
    if ended.status is not AuditStatus.DONE:
        raise SystemExit(f"the audit ended {ended.status.value}: {ended.failure_reason}")
    return application.report(audit.id, caller)


def print_summary(report: Report) -> None:
    console = Console()
    totals = report.totals
    console.print(
        f"[bold]Health score {report.health_score}/100[/]"
        + ("  (partial: a page or time cap stopped the crawl)" if report.partial else "")
    )
    console.print(
        f"{totals.pages} pages: {totals.ok} ok, {totals.redirects} redirects, {totals.broken} broken, "
        f"{totals.fetch_errors} fetch errors, {totals.blocked} blocked"
    )
    counts = report.issue_counts
    console.print(f"Issues: {counts.error} errors, {counts.warning} warnings, {counts.notice} notices")
    if report.coverage_warning is not None:
        console.print(f"[yellow]{report.coverage_warning.message}[/]")
    table = Table(title="Top issues by template")
    for column in ("template", "check", "severity", "pages", "template-wide"):
        table.add_column(column)
    rows: list[tuple[str, TemplateIssue]] = [
        (group.template, issue) for group in report.templates for issue in group.issues
    ]
    rows.sort(key=lambda row: (not row[1].template_wide, row[1].severity.rank, -row[1].count))
    for template, issue in rows[:15]:
        table.add_row(
            template,
            issue.check_code,
            issue.severity.value,
            str(issue.count),
            "yes" if issue.template_wide else "",
        )
    console.print(table)
    site_wide = [row for row in report.issues if row.check_code in ("robots_txt_missing", "sitemap_missing")]
    for row in site_wide:
        console.print(f"Site-wide: {row.check_code} ({row.severity.value})")
