"""Doubles for the webhook tests: an HTTPS receiver on 127.0.0.1 that parses requests with the stdlib only."""

import socket
import ssl
import threading
from collections.abc import Callable
from datetime import datetime

import trustme
from attrs import define, field

from siteaudit.ports.clock import Clock

RECEIVER_NAME = "hooks.retro-clock.example"
LOOPBACK_ALLOWED = "127.0.0.0/8"


@define
class Received:
    """One request as it arrived: the head parsed by hand, the raw body bytes untouched."""

    method: str
    target: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    at: datetime | None  # the test clock's time when it arrived


Answer = Callable[[ssl.SSLSocket, Received, int], None]  # connection, request, 0-based request number


def respond(status: int, *, body: bytes = b"", headers: tuple[tuple[str, str], ...] = ()) -> bytes:
    lines = [f"HTTP/1.1 {status} Test", f"Content-Length: {len(body)}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def answering(*statuses: int) -> Answer:
    """Answer the n-th request with statuses[n] (the last status repeats)."""

    def answer(conn: ssl.SSLSocket, request: Received, number: int) -> None:
        conn.sendall(respond(statuses[min(number, len(statuses) - 1)], body=b"thanks"))

    return answer


@define
class HttpsReceiver:
    """A threaded HTTPS server on 127.0.0.1 with a certificate for RECEIVER_NAME from `ca`."""

    ca: trustme.CA
    answer: Answer
    clock: Clock | None = None
    plain: bool = False  # no TLS: the listener an http:// URL would reach
    port: int = field(init=False, default=0)
    accepted: int = field(init=False, default=0)
    requests: list[Received] = field(init=False, factory=list)
    _sock: socket.socket = field(init=False)
    _context: ssl.SSLContext = field(init=False)
    _stop: threading.Event = field(init=False, factory=threading.Event)
    _thread: threading.Thread | None = field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert(RECEIVER_NAME).configure_cert(self._context)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.05)
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def url(self, path: str = "/hooks/audit-ended", host: str = RECEIVER_NAME, scheme: str = "https") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        raw.settimeout(5)
        try:
            conn = raw if self.plain else self._context.wrap_socket(raw, server_side=True)
            with conn:
                received = self._read(conn)  # type: ignore[arg-type]
                if received is None:
                    return
                number = len(self.requests)
                self.requests.append(received)
                self.answer(conn, received, number)  # type: ignore[arg-type]
        except (OSError, ssl.SSLError):
            return
        finally:
            raw.close()

    def _read(self, conn: ssl.SSLSocket) -> Received | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            body += chunk
        method, target, _version = request_line.split(" ", 2)
        at = self.clock.now() if self.clock is not None else None
        return Received(method=method, target=target, headers=headers, body=body, at=at)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sock.close()


StartReceiver = Callable[..., HttpsReceiver]  # the `receiver` fixture: start(answer, clock=..., plain=...)
