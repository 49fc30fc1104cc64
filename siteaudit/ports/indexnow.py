"""IndexNow (SPEC 4.9): notifying the engines that support it (not the largest one) of changed URLs."""

from collections.abc import Sequence
from typing import Protocol

from attrs import frozen


@frozen
class SubmissionAnswer:
    """One engine request's answer: its status (None without one) and the URLs it carried."""

    status_code: int | None
    urls: int
    error: str | None = None

    @property
    def accepted(self) -> bool:
        return self.status_code in (200, 202)


class IndexNowClient(Protocol):
    def submit(
        self, *, host: str, key: str, key_location: str | None, urls: Sequence[str]
    ) -> SubmissionAnswer:
        """POST one batch (at most 10,000 URLs of `host`) to the IndexNow endpoint; never raises for an
        answer, only returns it."""
        ...

    def key_file(self, url: str) -> str | None:
        """The body of the key file at `url` through the SSRF guard (at most 1 KB), or None."""
        ...
