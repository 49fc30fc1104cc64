"""A local stand-in of the Google endpoints the console provider calls, on 127.0.0.1 (pytest-httpserver):
the OAuth token endpoint (refresh-token and service-account JWT grants) and revocation, the Search
Console `sites` list, `searchAnalytics/query` with startRow/rowLimit paging, `sitemaps` list and
`urlInspection/index:inspect`, answering errors in Google's envelope. Shapes as documented (see
`siteaudit/adapters/console/google.py`)."""

import json
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, unquote

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from siteaudit.adapters.console.google import GoogleEndpoints


def _error(status: int, name: str, message: str) -> Response:
    body = {"error": {"code": status, "message": message, "status": name}}
    return Response(json.dumps(body), status=status, content_type="application/json")


def _json(body: Any) -> Response:
    return Response(json.dumps(body), status=200, content_type="application/json")


class FakeGoogle:
    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.refresh_tokens: set[str] = {"rt-good"}
        self.access_tokens: set[str] = set()
        self.sites: list[dict[str, str]] = [
            {"siteUrl": "https://retro-clock.example/", "permissionLevel": "siteOwner"}
        ]
        self.rows: list[dict[str, Any]] = []  # search analytics rows, answered in pages
        self.inspections: dict[str, dict[str, Any]] = {}
        self.sitemap_list: list[dict[str, Any]] = []
        self.fail: dict[str, list[tuple[int, str]]] = {}  # endpoint name -> answers to give first
        self.forbidden: set[str] = set()  # properties answering 403
        self.requests: list[tuple[str, dict[str, Any]]] = []  # (endpoint name, body or form)
        self.revoked: list[str] = []
        server.expect_request(re.compile(".*")).respond_with_handler(self._handle)

    @property
    def endpoints(self) -> GoogleEndpoints:
        base = f"http://127.0.0.1:{self.server.port}"
        return GoogleEndpoints(
            api=f"{base}/webmasters/v3",
            inspect=f"{base}/v1",
            token=f"{base}/token",
            revoke=f"{base}/revoke",
        )

    def expire_access_tokens(self) -> None:
        """Every access token handed out so far stops working (as after its hour)."""
        self.access_tokens.clear()

    def count(self, name: str) -> int:
        return sum(1 for n, _ in self.requests if n == name)

    def _handle(self, request: Request) -> Response:
        path = unquote(request.path)
        if path == "/token":
            return self._token(request)
        if path == "/revoke":
            form = parse_qs(request.get_data(as_text=True))
            token = form.get("token", [""])[0]
            self.requests.append(("revoke", {"token": token}))
            self.revoked.append(token)
            known = token in self.refresh_tokens
            self.refresh_tokens.discard(token)
            return _json({}) if known else _error(400, "invalid_token", "Token expired or revoked")
        name = self._name(path)
        body = json.loads(request.get_data() or b"{}")
        self.requests.append((name, body))
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or auth.removeprefix("Bearer ") not in self.access_tokens:
            return _error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        queued = self.fail.get(name)
        if queued:
            return _error(*queued.pop(0), message="injected")
        site = self._site(path, body)
        if site is not None and site in self.forbidden:
            return _error(
                403, "PERMISSION_DENIED", f"User does not have sufficient permission for site '{site}'."
            )
        if name == "sites":
            return _json({"siteEntry": self.sites})
        if name == "query":
            start, limit = int(body.get("startRow", 0)), int(body.get("rowLimit", 1000))
            rows = [r for r in self.rows if self._matches(r, body)]
            page = rows[start : start + limit]
            return _json({"rows": page, "responseAggregationType": "byPage"} if page else {})
        if name == "sitemaps":
            return _json({"sitemap": self.sitemap_list})
        if name == "inspect":
            result = self.inspections.get(
                body["inspectionUrl"], {"verdict": "NEUTRAL", "coverageState": "URL is unknown to Google"}
            )
            return _json(
                {
                    "inspectionResult": {
                        "inspectionResultLink": "https://search.google.com/x",
                        "indexStatusResult": result,
                    }
                }
            )
        return _error(404, "NOT_FOUND", "no such method")

    def _name(self, path: str) -> str:
        if path.endswith("/searchAnalytics/query"):
            return "query"
        if path.endswith("/sitemaps"):
            return "sitemaps"
        if path.endswith("urlInspection/index:inspect"):
            return "inspect"
        if path.endswith("/webmasters/v3/sites"):
            return "sites"
        return path

    def _site(self, path: str, body: dict[str, Any]) -> str | None:
        if "siteUrl" in body:
            return str(body["siteUrl"])
        match = re.match(r"^/webmasters/v3/sites/(.+)/(searchAnalytics/query|sitemaps)$", path)
        return match.group(1) if match else None

    @staticmethod
    def _matches(row: dict[str, Any], body: dict[str, Any]) -> bool:
        dims = body.get("dimensions", [])
        if len(row["keys"]) != len(dims):
            return False
        for group in body.get("dimensionFilterGroups", []):
            for f in group["filters"]:
                if f["dimension"] == "page" and row["keys"][dims.index("page")] != f["expression"]:
                    return False
        return True

    def _token(self, request: Request) -> Response:
        form = {k: v[0] for k, v in parse_qs(request.get_data(as_text=True)).items()}
        self.requests.append(("token", form))
        grant = form.get("grant_type")
        if grant == "refresh_token":
            if form.get("refresh_token") not in self.refresh_tokens:
                return Response(
                    json.dumps(
                        {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
                    ),
                    status=400,
                    content_type="application/json",
                )
        elif grant != "urn:ietf:params:oauth:grant-type:jwt-bearer" or not form.get("assertion"):
            return Response(
                json.dumps({"error": "unsupported_grant_type"}), status=400, content_type="application/json"
            )
        token = "ya29." + secrets.token_urlsafe(16)
        self.access_tokens.add(token)
        return _json(
            {
                "access_token": token,
                "expires_in": 3599,
                "token_type": "Bearer",
                "scope": form.get("scope", ""),
            }
        )
