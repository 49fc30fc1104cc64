"""An in-memory work queue: messages wait in order until a worker (or a test) takes them."""

import collections
import threading

from siteaudit.domain.ids import AuditId, RecheckId
from siteaudit.ports.queue import DispatchError


class MemoryTaskQueue:
    """Thread-safe FIFO of (actor, argument) messages. `refuse_with` simulates a broker that is down."""

    def __init__(self) -> None:
        self._messages: collections.deque[tuple[str, int | None]] = collections.deque()
        self._tokens: dict[int, str] = {}
        self._lock = threading.Lock()
        self.refuse_with: str | None = None

    def _put(self, actor: str, argument: int | None) -> None:
        with self._lock:
            if self.refuse_with is not None:
                raise DispatchError(self.refuse_with)
            self._messages.append((actor, argument))

    def crawl_slice(self, audit_id: AuditId, *, verify_token: str | None = None) -> None:
        self._put("crawl_slice", audit_id)
        if verify_token is not None:
            with self._lock:
                self._tokens[audit_id] = verify_token

    def verify_token(self, audit_id: int) -> str | None:
        """The token that travels with the audit's crawl-slice messages (held in this process only)."""
        with self._lock:
            return self._tokens.get(audit_id)

    def finalize_audit(self, audit_id: AuditId) -> None:
        self._put("finalize_audit", audit_id)

    def deliver_webhooks(self) -> None:
        self._put("deliver_webhooks", None)

    def recheck(self, recheck_id: RecheckId) -> None:
        self._put("run_recheck", recheck_id)

    def take(self) -> tuple[str, int | None] | None:
        """The oldest message, removed from the queue; None when empty."""
        with self._lock:
            return self._messages.popleft() if self._messages else None

    def pending(self) -> list[tuple[str, int | None]]:
        with self._lock:
            return list(self._messages)
