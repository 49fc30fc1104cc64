"""Email: monitoring alerts and other messages to people."""

from typing import Protocol


class MailUndeliverable(Exception):
    """The mail server refused the message, or could not be reached after the adapter's retries."""


class Mailer(Protocol):
    # False when nothing is delivered (no mail server is configured: mails are only logged), so a
    # door can show a person what a mail would have told them.
    delivers: bool

    def send(self, *, to: str, subject: str, text: str) -> None:
        """Send a plain-text message. Raises MailUndeliverable when the server refuses it outright;
        transient failures are retried by the adapter."""
        ...
