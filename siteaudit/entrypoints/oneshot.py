"""`siteaudit audit URL`: one audit in this process (in-memory database, inline crawl), then its report."""

from collections.abc import Sequence
from typing import IO, Any, Protocol

from attrs import evolve, frozen
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.text import line
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.issue import Severity
from siteaudit.domain.report import CheckSummary, Report, TemplateIssue
from siteaudit.entrypoints.output import ProgressBar, echo
from siteaudit.ports.application import Application, CallerApi, Jobs, LocalOwner, run_declared
from siteaudit.settings import Settings

# Piped output (CI logs) is not cut to a terminal's width: lines are as long as they need to be.
PIPE_WIDTH = 10_000
# The exit code of an audit that audited no HTML page: no score (docs/cli.md, docs/scoring.md).
EXIT_NO_SCORE = 5
# The checks about the host's own files (robots.txt, sitemaps, llms.txt), printed whatever else is shown.
HOST_FILE_GROUPS = frozenset({"robots", "sitemaps"})


class OneShot(CallerApi, Jobs, LocalOwner, Protocol):
    """What the one-shot audit uses (docs/architecture.md "Roles"): it is the local owner, the key's holder
    and the worker at once."""


def one_shot_application(settings: Settings) -> Application:
    """An application on an in-memory database whose crawl slices run when called. Raises ValueError for a
    setting that stops the start (an unreadable SITEAUDIT_CA_BUNDLE)."""
    settings = evolve(settings, database_url="memory://", slice_pages=50)
    return bootstrap(settings, queue=MemoryTaskQueue()).application


@frozen
class AuditOptions:
    """What `siteaudit audit` asks for, in this process or on a service (docs/cli.md): `url`, or exactly
    `urls` (a list audit); with `sitemap_only`, what the sitemaps list."""

    url: str | None
    max_pages: int | None = None
    max_rps: float | None = None
    concurrency: int | None = None
    verify_token: str | None = None
    render: bool = False
    urls: Sequence[str] | None = None
    sitemap_only: bool = False

    def start(self, application: CallerApi, caller: Caller) -> Any:
        """`StartAudit`'s answer."""
        return run_declared(
            application,
            "StartAudit",
            caller,
            url=self.url,
            urls=None if self.urls is None else tuple(self.urls),
            sitemap_only=self.sitemap_only or None,
            max_pages=self.max_pages,
            max_rps=self.max_rps,
            concurrency=self.concurrency,
            verify_token=self.verify_token,
            # Without --render: the service's default, a site's saved setting (none in the one-shot's
            # fresh in-memory database, so not rendered there).
            render=self.render or None,
        )


def run_audit(application: OneShot, asked: AuditOptions, *, progress: bool) -> Report:
    """Audit as the local owner, the crawl slices run here, and read the report (docs/cli.md)."""
    issued = application.ensure_local_owner(plan="scale", starting_credits=1_000_000)
    assert issued is not None
    caller = application.authenticate(issued.raw)
    started = asked.start(application, caller)
    audit = run_declared(application, "GetAudit", caller, crawl_id=started.crawl_id)
    with ProgressBar(asked.url or audit.site_url, total=audit.max_pages, shown=progress) as bar:
        while True:
            crawled = application.run_crawl_slice(audit.crawl_id, verify_token=asked.verify_token)
            bar.update(crawled.pages_crawled, status="running")
            if crawled.next != "slice":
                break
    ended = application.finalize_audit(audit.crawl_id)
    if ended.status is not AuditStatus.DONE:
        raise SystemExit(line(f"the audit ended {ended.status.value}: {ended.failure_reason}"))
    report: Report = run_declared(application, "GetReport", caller, crawl_id=audit.crawl_id)
    return report


def output_console(file: IO[str] | None = None) -> Console:
    """A console on `file` (stdout): a terminal's width on a terminal, unlimited width through a pipe."""
    console = Console(file=file)
    if console.is_terminal:
        return console
    return Console(file=file, width=PIPE_WIDTH)


def print_summary(report: Report, console: Console | None = None) -> None:
    """Score, totals and top issues by template; data (template names, codes) printed as one line each,
    with nothing a terminal acts on (`siteaudit.adapters.text.line`)."""
    console = console or output_console()
    totals = report.totals
    if report.health_score is None:
        console.print("[bold]No health score: no HTML page could be audited[/]")
    else:
        console.print(
            f"[bold]Health score {report.health_score}/100[/]"
            + ("  (partial: a page or time cap stopped the crawl)" if report.partial else "")
        )
    resources = report.stats.resources
    console.print(
        f"{totals.pages} pages: {totals.ok} ok, {totals.redirects} redirects, {totals.broken} broken, "
        f"{totals.fetch_errors} fetch errors, {totals.blocked} blocked; "
        f"{resources.checked} resources checked (images, external links, non-HTML answers)"
    )
    counts = report.issue_counts
    console.print(f"Issues: {counts.error} errors, {counts.warning} warnings, {counts.notice} notices")
    if report.coverage_warning is not None:
        warning = report.coverage_warning
        console.print(Text(line(f"{warning.code}: {warning.message}"), style="yellow"))
    table = Table(title="Top issues by template")
    for column in ("template", "check", "severity", "pages", "template-wide"):
        table.add_column(column, overflow="fold")
    rows: list[tuple[str, TemplateIssue]] = [
        (group.template, issue) for group in report.templates for issue in group.issues
    ]
    rows.sort(key=lambda row: (not row[1].template_wide, row[1].severity.rank, -row[1].count))
    for template, issue in rows[:15]:
        table.add_row(
            Text(line(template)),
            Text(line(issue.check_code)),
            issue.severity.value,
            str(issue.count),
            "yes" if issue.template_wide else "",
        )
    console.print(table)
    for row in host_file_issues(report):
        console.print(
            f"Site-wide: {escape(line(row.check_code))} ({row.severity.value}, {row.count} issues)"
            + (f": {escape(line(row.fix))}" if row.severity is Severity.ERROR else "")
        )


def host_file_issues(report: Report) -> list[CheckSummary]:
    """The report's findings about robots.txt, the sitemaps and llms.txt: shown in every summary, since
    they can keep the whole site out of the audit (and out of search engines)."""
    return [
        row
        for row in report.issues
        if row.check_code in CATALOGUE and CATALOGUE[row.check_code].group in HOST_FILE_GROUPS
    ]


def no_score_line(report: Report) -> str | None:
    """Why the run exits `EXIT_NO_SCORE` (the audit audited no HTML page), or None when it has a score."""
    if report.health_score is not None:
        return None
    code = report.coverage_warning.code if report.coverage_warning is not None else "no_html_pages"
    return f"failed: no health score ({code}): no HTML page could be audited"


def failing_checks(report: Report, fail_on: Severity) -> list[CheckSummary]:
    """The report's checks of `fail_on`'s severity or worse, most severe and most frequent first."""
    found = [row for row in report.issues if row.severity.rank <= fail_on.rank]
    return sorted(found, key=lambda row: (row.severity.rank, -row.count, row.check_code))


def failure_line(report: Report, fail_on: Severity) -> str | None:
    """Why `--fail-on` fails the run (the checks, with their issue and page counts), or None."""
    failing = failing_checks(report, fail_on)
    if not failing:
        return None
    named = ", ".join(
        f"{row.check_code} ({row.severity.value}, {row.count} issues on {row.pages} pages)" for row in failing
    )
    return f"failed: --fail-on {fail_on.value} found {len(failing)} checks: {named}"


def exit_for(report: Report, fail_on: Severity | None, *, failed: int) -> int:
    """The exit code of an audit command once its report is printed, its reasons said on stderr: `--fail-on`
    failures first, then a missing score (`EXIT_NO_SCORE`, which wins), else `failed` or 0."""
    failing = None if fail_on is None else failure_line(report, fail_on)
    if failing is not None:
        echo(failing, err=True)
    unscored = no_score_line(report)
    if unscored is not None:
        echo(unscored, err=True)
        return EXIT_NO_SCORE
    return 0 if failing is None else failed
