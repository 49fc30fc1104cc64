"""Email: monitoring alerts and other messages to people."""

from typing import Protocol


class Mailer(Protocol):
    def send(self, *, to: str, subject: str, text: str) -> None:
        """Send a plain-text message. Raises MailUndeliverable when the server refuses it outright;
        transient failures are retried by the adapter."""
        ...
