"""Mailers: SMTP with the standard library (STARTTLS and login as configured), and a log-only mailer
for the embedded default when no SMTP server is configured."""

import logging
import smtplib
import ssl
import time
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

from attrs import field, frozen

from siteaudit.ports.mailer import MailUndeliverable

log = logging.getLogger("siteaudit.mail")


@frozen
class SmtpServer:
    """Where mail goes: `smtp://user:password@host:587` (STARTTLS when `starttls`), `smtps://` for TLS
    from the first byte; `sender` is the From address."""

    host: str
    port: int = 587
    user: str = ""
    password: str = field(default="", repr=False)
    sender: str = "siteaudit@localhost"
    starttls: bool = True
    implicit_tls: bool = False
    timeout_s: float = 15.0

    @classmethod
    def from_url(cls, url: str, *, sender: str) -> "SmtpServer":
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps", "smtp+starttls") or not parts.hostname:
            raise ValueError("SITEAUDIT_SMTP_URL must look like smtp://user:password@host:587")
        implicit = parts.scheme == "smtps"
        query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
        return cls(
            host=parts.hostname,
            port=parts.port or (465 if implicit else 587),
            user=unquote(parts.username or ""),
            password=unquote(parts.password or ""),
            sender=sender,
            starttls=not implicit
            and query.get("starttls", "true").lower() not in ("0", "false", "no", "off"),
            implicit_tls=implicit,
        )


class SmtpMailer:
    """`Mailer` over SMTP: a connection per message, three tries a few seconds apart for transient
    failures (4xx answers, network errors); a 5xx refusal raises MailUndeliverable at once."""

    delivers: bool = True

    def __init__(
        self, server: SmtpServer, *, context: ssl.SSLContext | None = None, retry_s: float = 2.0
    ) -> None:
        self._server = server
        self._context = context or ssl.create_default_context()
        self._retry_s = retry_s

    def send(self, *, to: str, subject: str, text: str) -> None:
        message = EmailMessage()
        message["From"] = self._server.sender
        message["To"] = to
        message["Subject"] = subject
        message.set_content(text)
        for attempt in range(3):
            try:
                self._send(message)
                return
            except smtplib.SMTPResponseException as exc:
                if exc.smtp_code >= 500 or attempt == 2:
                    raise MailUndeliverable(f"{exc.smtp_code} {exc.smtp_error!r}") from exc
            except (smtplib.SMTPException, OSError) as exc:
                if attempt == 2:
                    raise MailUndeliverable(str(exc) or type(exc).__name__) from exc
            time.sleep(self._retry_s * (attempt + 1))

    def _send(self, message: EmailMessage) -> None:
        s = self._server
        client: smtplib.SMTP
        if s.implicit_tls:
            client = smtplib.SMTP_SSL(s.host, s.port, timeout=s.timeout_s, context=self._context)
        else:
            client = smtplib.SMTP(s.host, s.port, timeout=s.timeout_s)
        with client:
            client.ehlo()
            if s.starttls and not s.implicit_tls:
                client.starttls(context=self._context)
                client.ehlo()
            if s.user:
                client.login(s.user, s.password)
            client.send_message(message)


class LogMailer:
    """`Mailer` that only logs (the embedded default without SITEAUDIT_SMTP_URL or SITEAUDIT_SMTP_HOST)."""

    delivers: bool = False

    def send(self, *, to: str, subject: str, text: str) -> None:
        log.info("mail (no SMTP server configured) to %s: %s\n%s", to, subject, text)
