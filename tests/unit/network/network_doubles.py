"""Doubles for the outbound-HTTP tests: listeners on 127.0.0.1 and a recording network backend."""

import socket
import threading
from collections.abc import Callable, Iterable

import httpcore2 as httpcore

LOOPBACK_ALLOWED = "127.0.0.0/8"


class Tripwire:
    """A real listener on 127.0.0.1 that counts every connection accepted; it never answers."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self._sock.settimeout(0.05)
        self.port: int = self._sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


class RawServer:
    """A threaded TCP server on 127.0.0.1 whose `answer(connection)` writes whatever bytes it likes."""

    def __init__(self, answer: Callable[[socket.socket], None]) -> None:
        self._answer = answer
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.05)
        self.port: int = self._sock.getsockname()[1]
        self.requests: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            head = b""
            try:
                while b"\r\n\r\n" not in head:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    head += chunk
                self.requests.append(head)
                self._answer(conn)
            except OSError:
                return

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """The real network for loopback, a dead one elsewhere; remembers every address dialled.

    Tests never reach the internet: a public address the guard lets through fails here at once.
    """

    def __init__(self) -> None:
        self.dialled: list[tuple[str, int]] = []
        self._real = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[object] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.dialled.append((host, port))
        if not (host.startswith("127.") or host == "::1"):
            raise httpcore.ConnectError(f"offline test network: {host} is unreachable")
        return await self._real.connect_tcp(host, port, timeout=timeout, local_address=local_address)

    async def sleep(self, seconds: float) -> None:
        await self._real.sleep(seconds)
