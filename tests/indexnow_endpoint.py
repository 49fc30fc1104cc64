"""A local IndexNow endpoint on 127.0.0.1 for tests: records every request (path, headers, JSON body) and
answers each with the next scripted status (200 when the script is empty); `None` in the script drops
the connection without an answer."""

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from attrs import frozen

from tests.local_sites import SERVER_POLL_S


@frozen
class Received:
    path: str
    content_type: str
    body: dict[str, Any]


class LocalIndexNow:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.script: deque[int | None] = deque()
        self.default = 200
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                with endpoint._lock:
                    endpoint.received.append(
                        Received(self.path, self.headers.get("content-type") or "", json.loads(raw or b"{}"))
                    )
                    status = endpoint.script.popleft() if endpoint.script else endpoint.default
                if status is None:
                    self.close_connection = True
                    self.connection.close()
                    return
                answer = b"" if status in (200, 202) else f"answered {status}".encode()
                self.send_response(status)
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": SERVER_POLL_S}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/indexnow"

    def answer(self, *statuses: int | None) -> None:
        with self._lock:
            self.script.extend(statuses)

    def urls_sent(self) -> list[str]:
        with self._lock:
            return [u for r in self.received for u in r.body.get("urlList", [])]

    def start(self) -> "LocalIndexNow":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
