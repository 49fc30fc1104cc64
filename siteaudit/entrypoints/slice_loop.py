"""The slice loop: one asyncio event loop per worker process carries every crawl slice the process runs.

A crawl slice spends most of its time waiting: for its host's next turn (1/max_rps), for the host's rate
shared with other audits, for answers. Run on a Dramatiq worker thread, each waiting slice held that
thread, so a process carried as many audits as it had threads (measured: 12 audits at 3 requests/s on 4
threads reached 31 % of the allowed rate). Here the `crawl_slice` actor hands its slice to this loop and
returns: the message is acknowledged once the slice is on the loop, the thread takes the next message,
and the loop multiplexes the fetches of every running slice. What a process carries is then bounded by
CPU and memory, and by `capacity` (SITEAUDIT_WORKER_SLICES): when that many slices run, the actor waits
for one to end before taking its slice on, so a busy process leaves the broker's messages to others.

Acknowledging before the slice ends moves its recovery off the broker:

- a slice that raises is sent again by this loop, after 2, 4, 8 s (`max_retries` times, counted in the
  message's `retries` option as Dramatiq's own retries are); after that its lease, released by the
  failing slice, is the reaper's (as a message Dramatiq gave up on was);
- a slice running past `time_limit_s` is cancelled and sent again the same way;
- `stop()` (SIGTERM) cancels the running slices (each releases its lease and keeps its frontier: the
  URLs in flight stay queued) and sends each again at once, for another process to carry on;
- a process killed outright loses its slices' messages: their leases expire and the reaper re-dispatches
  them (`SITEAUDIT_LEASE_S` + `SITEAUDIT_REAP_GRACE_S`). That was already so when the message was held:
  the broker redelivered it, and the redelivered slice found the dead slice's lease and stopped.
"""

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Final

log = logging.getLogger("siteaudit.worker")

Again = Callable[[float, bool], None]
"""Sends the slice's message again: (delay in seconds, whether it counts as a retry)."""

DEFAULT_CAPACITY: Final = 64
MIN_BACKOFF_S: Final = 2.0


class SliceLoop:
    """A daemon thread running one event loop; `submit` puts a slice on it (waiting for room)."""

    def __init__(
        self,
        *,
        capacity: int = DEFAULT_CAPACITY,
        time_limit_s: float,
        max_retries: int = 3,
        min_backoff_s: float = MIN_BACKOFF_S,
        database_threads: int = 8,
    ) -> None:
        if capacity < 1:
            raise ValueError("SITEAUDIT_WORKER_SLICES must be at least 1")
        self.capacity = capacity
        self.time_limit_s = time_limit_s
        self.max_retries = max_retries
        self.min_backoff_s = min_backoff_s
        self._loop = asyncio.new_event_loop()
        # The slices' database work (`asyncio.to_thread`) runs on these threads. One for SQLite: it takes
        # one writer at a time, and writers queued here hand over at once, where writers queued on its
        # busy timeout poll for the lock with sleeps of up to 100 ms.
        self._loop.set_default_executor(
            ThreadPoolExecutor(max_workers=database_threads, thread_name_prefix="siteaudit-slice-db")
        )
        self._thread = threading.Thread(target=self._loop.run_forever, name="siteaudit-slices", daemon=True)
        self._room = threading.Semaphore(capacity)
        self._running: dict[asyncio.Task[None], Again] = {}  # touched on the loop's thread only
        self._stopping = threading.Event()

    def start(self) -> None:
        self._thread.start()

    @property
    def running(self) -> int:
        return len(self._running)

    def submit(
        self, slice_work: Callable[[], Coroutine[Any, Any, object]], *, again: Again, retries: int = 0
    ) -> bool:
        """Run `slice_work()` on the loop; returns once it is there (False: the loop is stopping, and the
        slice was sent again instead). Blocks while `capacity` slices are running."""
        while not self._room.acquire(timeout=0.5):
            if self._stopping.is_set():
                again(0.0, False)
                return False
        started: Future[bool] = Future()

        def start() -> None:
            if self._stopping.is_set():
                started.set_result(False)
                return
            task = self._loop.create_task(self._guarded(slice_work, again, retries))
            self._running[task] = again
            task.add_done_callback(self._ended)
            started.set_result(True)

        try:
            if self._stopping.is_set():
                raise RuntimeError("stopping")
            self._loop.call_soon_threadsafe(start)
            on_loop = started.result(timeout=30)
        except (RuntimeError, TimeoutError):  # stopping, or the loop stopped under this call
            on_loop = False
        if not on_loop:
            self._room.release()
            again(0.0, False)
        return on_loop

    def _ended(self, task: "asyncio.Task[None]") -> None:
        self._running.pop(task, None)
        self._room.release()

    async def _guarded(
        self, slice_work: Callable[[], Coroutine[Any, Any, object]], again: Again, retries: int
    ) -> None:
        try:
            await asyncio.wait_for(slice_work(), self.time_limit_s)
        except asyncio.CancelledError:
            raise  # stop(): sent again there, once the slice has unwound
        except Exception as error:
            if isinstance(error, TimeoutError):
                log.error("a crawl slice ran past %.0f s and was stopped", self.time_limit_s)
            else:
                log.exception("a crawl slice failed")
            if retries >= self.max_retries:
                log.error("the slice failed %s times: its audit is left to the reaper", retries + 1)
                return
            try:
                again(self.min_backoff_s * 2**retries, True)
            except Exception:
                log.exception("the failed slice could not be sent again: its audit is left to the reaper")

    def stop(self, timeout_s: float = 30.0) -> None:
        """Cancel the running slices, wait for them to unwind (each releases its lease; the URLs it had in
        flight stay queued), send each again at once, and stop the loop."""
        self._stopping.set()
        if not self._thread.is_alive():
            return

        async def cancel_all() -> list[Again]:
            running = dict(self._running)
            for task in running:
                task.cancel()
            if running:
                await asyncio.wait(running, timeout=timeout_s)
            return list(running.values())

        agains = asyncio.run_coroutine_threadsafe(cancel_all(), self._loop).result(timeout=timeout_s + 5)
        for again in agains:
            try:
                again(0.0, False)
            except Exception:
                log.exception("a stopped slice could not be sent again: its audit is left to the reaper")
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=timeout_s)
