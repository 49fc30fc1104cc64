"""A typed HTTP client for a siteaudit service: the application interface over REST `/v1`."""

from siteaudit.adapters.client.application import NOT_YET, HttpApplication
from siteaudit.adapters.client.transport import RemoteError, Transport, Unreachable

__all__ = ["NOT_YET", "HttpApplication", "RemoteError", "Transport", "Unreachable"]
