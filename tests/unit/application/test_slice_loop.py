"""The worker's slice loop: many waiting slices on one thread, capacity, retries, and a clean stop."""

import asyncio
import threading
import time

import pytest

from siteaudit.entrypoints.slice_loop import SliceLoop


class Sent:
    """Records what `again` was asked: (delay, failed) per call."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, bool]] = []
        self.lock = threading.Lock()

    def __call__(self, delay_s: float, failed: bool) -> None:
        with self.lock:
            self.calls.append((delay_s, failed))


def wait_until(condition: object, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.01)


@pytest.fixture
def loop_of() -> object:
    made: list[SliceLoop] = []

    def make(**options: object) -> SliceLoop:
        slices = SliceLoop(time_limit_s=options.pop("time_limit_s", 30.0), **options)  # type: ignore[arg-type]
        slices.start()
        made.append(slices)
        return slices

    yield make
    for slices in made:
        slices.stop(timeout_s=5)


def test_many_waiting_slices_share_one_thread_and_the_submitter_returns_at_once(loop_of) -> None:  # type: ignore[no-untyped-def]
    slices = loop_of(capacity=64)
    threads: set[str] = set()
    finished: list[int] = []

    async def waiting_slice(n: int) -> None:
        threads.add(threading.current_thread().name)
        await asyncio.sleep(0.5)  # a slice waiting for its host's turn
        finished.append(n)

    started = time.monotonic()
    for n in range(48):
        assert slices.submit(lambda n=n: waiting_slice(n), again=Sent())
    assert time.monotonic() - started < 0.4  # handed over, not run by the submitter
    wait_until(lambda: len(finished) == 48)
    assert time.monotonic() - started < 3.0  # waited side by side, not one after another
    assert threads == {"siteaudit-slices"}
    wait_until(lambda: slices.running == 0)


def test_a_full_loop_makes_the_submitter_wait_for_room(loop_of) -> None:  # type: ignore[no-untyped-def]
    slices = loop_of(capacity=2)
    release = threading.Event()

    async def held() -> None:
        while not release.is_set():
            await asyncio.sleep(0.01)

    assert slices.submit(held, again=Sent())
    assert slices.submit(held, again=Sent())
    third = threading.Thread(target=lambda: slices.submit(held, again=Sent()))
    third.start()
    third.join(timeout=0.7)
    assert third.is_alive()  # no room: the message stays with the submitter (unacknowledged)
    assert slices.running == 2
    release.set()
    third.join(timeout=5)
    assert not third.is_alive()
    wait_until(lambda: slices.running == 0)


def test_a_failing_slice_is_sent_again_with_backoff_until_the_retries_are_spent(loop_of) -> None:  # type: ignore[no-untyped-def]
    slices = loop_of(max_retries=3, min_backoff_s=2.0)

    async def failing() -> None:
        raise RuntimeError("boom")

    sent = [Sent() for _ in range(4)]
    for retries, again in enumerate(sent):
        slices.submit(failing, again=again, retries=retries)
    wait_until(lambda: slices.running == 0)
    assert [s.calls for s in sent] == [[(2.0, True)], [(4.0, True)], [(8.0, True)], []]  # the 4th: reaper's


def test_a_slice_past_its_time_limit_is_stopped_and_sent_again(loop_of) -> None:  # type: ignore[no-untyped-def]
    slices = loop_of(time_limit_s=0.2)
    unwound = threading.Event()

    async def endless() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            unwound.set()

    again = Sent()
    slices.submit(endless, again=again)
    wait_until(lambda: again.calls)
    assert unwound.is_set()
    assert again.calls == [(2.0, True)]


def test_stop_cancels_the_running_slices_and_sends_each_again_after_it_unwound(loop_of) -> None:  # type: ignore[no-untyped-def]
    slices = loop_of()
    order: list[str] = []
    lock = threading.Lock()

    def again_of(name: str):  # type: ignore[no-untyped-def]
        def again(delay_s: float, failed: bool) -> None:
            with lock:
                order.append(f"sent {name} {delay_s} {failed}")

        return again

    async def slice_(name: str) -> None:
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.05)  # the lease's release on the way out
            with lock:
                order.append(f"unwound {name}")

    for name in ("a", "b"):
        slices.submit(lambda name=name: slice_(name), again=again_of(name))
    wait_until(lambda: slices.running == 2)
    slices.stop(timeout_s=5)
    assert sorted(order[:2]) == ["unwound a", "unwound b"]
    assert sorted(order[2:]) == ["sent a 0.0 False", "sent b 0.0 False"]
    late = Sent()
    assert not slices.submit(lambda: slice_("c"), again=late)
    assert late.calls == [(0.0, False)]  # a stopped loop sends the message on at once
