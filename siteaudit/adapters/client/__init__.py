"""A typed HTTP client for a siteaudit service: the application interface over REST `/v1`."""

from siteaudit.adapters.client.application import HttpApplication
from siteaudit.adapters.client.transport import RemoteError, Transport, Unreachable

__all__ = ["HttpApplication", "RemoteError", "Transport", "Unreachable"]
