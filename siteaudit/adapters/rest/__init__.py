"""The REST interface (docs/rest-api.md) on Falcon: thin resources over the application, one error
envelope."""

from siteaudit.adapters.rest.app import create_api

__all__ = ["create_api"]
