"""What the CLI prints for people, through `siteaudit.adapters.text` (docs/security.md, "Human output:
terminal escapes and spreadsheet formulas"): every line on stdout and stderr goes through here or through
a rich Text built from `text.line`. The tables of the remote commands and the one progress bar of every
command that waits (`siteaudit audit`, in process or remote, `wait-for-audit`, `wait-for-recheck`) are
here too."""

import sys
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Final

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from siteaudit.adapters import text

# Piped output (CI logs, `| grep`) is not cut to a terminal's width: lines are as long as they need to be.
PIPE_WIDTH: Final = 10_000


def echo(message: str, *, err: bool = False, nl: bool = True) -> None:
    """`message` (its lines and tabs kept) with nothing a terminal acts on."""
    click.echo(text.block(message), err=err, nl=nl)


def error_line(message: str) -> None:
    """`error: message` as one line on stderr."""
    click.echo(f"error: {text.line(message)}", err=True)


def console() -> Console:
    """A console on stdout: a terminal's width on a terminal, unlimited width through a pipe."""
    found = Console()
    return found if found.is_terminal else Console(width=PIPE_WIDTH)


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A table of `rows` under `title`, each cell one line (`text.line`) shown as text, never as markup."""
    table = Table(title=Text(text.line(title)), title_justify="left")
    for name in header:
        table.add_column(Text(text.line(name)), overflow="fold")
    for row in rows:
        table.add_row(*(Text(text.line(cell)) for cell in row))
    console().print(table)


class ProgressBar:
    """The progress bar on stderr of a command that waits: status, what is waited for, a bar of `done` of
    `total`, a rate and the time elapsed; shown only on a terminal, gone when it ends.

        with ProgressBar("https://retro-clock.example/", total=500, shown=True) as bar:
            bar.update(12, status="running")
    """

    def __init__(self, what: str, *, total: float | None, shown: bool, unit: str = "pages") -> None:
        self._unit = unit
        self._since = time.monotonic()
        self._progress = Progress(
            TextColumn("[bold]{task.fields[status]}[/]"),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            disable=not shown,
            transient=True,
        )
        self._task: TaskID = self._progress.add_task(
            escape(text.line(what)), total=total, status="queued", rate=""
        )

    @staticmethod
    def shown_on_terminal(*, quiet: bool = False) -> bool:
        """Whether a bar is shown: stderr is a terminal and the output is not for a program (`quiet`)."""
        return not quiet and sys.stderr.isatty()

    def __enter__(self) -> "ProgressBar":
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._progress.stop()

    def update(
        self, done: float, *, status: str, total: float | None = None, per_minute: float | None = None
    ) -> None:
        """`done` of `total` (unchanged when None), with `status`; the rate is `per_minute`, or counted
        from when the bar started when None."""
        if per_minute is None and done:
            per_minute = done / max(1.0, time.monotonic() - self._since) * 60
        rate = f"{per_minute:.0f} {self._unit}/min" if per_minute else ""
        self._progress.update(
            self._task, completed=done, total=total, status=escape(text.line(status)), rate=rate
        )
