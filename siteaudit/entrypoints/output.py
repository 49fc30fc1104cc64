"""What the CLI prints for people, through `siteaudit.adapters.text` (docs/security.md, "Human output:
terminal escapes and spreadsheet formulas"): every line on stdout and stderr goes through here or through
a rich Text built from `text.line`."""

import click

from siteaudit.adapters import text


def echo(message: str, *, err: bool = False, nl: bool = True) -> None:
    """`message` (its lines and tabs kept) with nothing a terminal acts on."""
    click.echo(text.block(message), err=err, nl=nl)


def error_line(message: str) -> None:
    """`error: message` as one line on stderr."""
    click.echo(f"error: {text.line(message)}", err=True)
