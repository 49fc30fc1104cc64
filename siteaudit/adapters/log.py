"""Logging: one line per event, plain or JSON, with anything shaped like a key, token or secret redacted.

Redaction happens on the final formatted line, so messages, arguments, extra fields and exception
tracebacks are all covered, whoever logs them.
"""

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Final

_SECRETS: Final = re.compile(
    r"((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{8,})"  # Stripe secret and restricted keys: nothing kept
    r"|(sk_[A-Za-z0-9]{10,})"  # API keys (anything longer than the 12-character prefix)
    r"|(whsec_[A-Za-z0-9]{8,})"  # webhook signing secrets
    r"|((?i:bearer)\s+\S+)"  # Authorization headers
    # basic auth in an Authorization header, a staging access's (docs/security.md), however it is quoted
    r"|(?P<basic>(?i:authorization)[\"']?\s*[:,=]\s*[\"']?(?i:basic)\s+)[A-Za-z0-9+/=]+"
    r"|(gAAAAA[A-Za-z0-9_\-=]{20,})"  # sealed values (Fernet tokens)
    r"|((?i:verify_token|device_code|secret|password|token)[\"']?\s*[:=]\s*[\"']?[^\s\"',&}]+)"
)
_ACCESS_FIELDS: Final = ("request_id", "method", "path", "status", "duration_ms", "key_prefix", "remote")


def redact(text: str) -> str:
    def hide(match: re.Match[str]) -> str:
        value = match.group(0)
        if match.group(1):
            return "[redacted]"
        if match.group("basic"):
            return match.group("basic") + "[redacted]"
        if value.startswith("sk_"):
            return value[:12] + "…[redacted]"
        for separator in ("=", ":", " "):
            if separator in value:
                return value.split(separator, 1)[0] + separator + "[redacted]"
        return "[redacted]"

    return _SECRETS.sub(hide, text)


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in _ACCESS_FIELDS:
            if hasattr(record, name):
                entry[name] = getattr(record, name)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return redact(json.dumps(entry, default=str))


# Libraries that log a line per request they make (httpx2: "HTTP Request: GET ... 200", one per fetched
# URL) or per step of one (httpcore2): their lines are for debugging, so shown at the debug level only.
PER_REQUEST_LOGGERS: Final = ("httpx2", "httpcore2")


def configure_logging(*, level: str = "info", as_json: bool = False) -> None:
    """Replace the root handlers with one redacting handler on stderr; the HTTP libraries' per-request
    lines only at the debug level."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if as_json else RedactingFormatter("%(asctime)s %(levelname)s %(name)s %(message)s")
    )
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level.upper())
    logging.getLogger("alembic").setLevel(logging.WARNING)
    logging.getLogger("pika").setLevel(logging.WARNING)
    for name in PER_REQUEST_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if root.level <= logging.DEBUG else logging.WARNING)
