"""The Google Search Console provider: direct REST calls over httpx2, credentials from google-auth.

Endpoints and shapes, as documented:
- sites list: GET {api}/sites -> {siteEntry: [{siteUrl, permissionLevel}]}
  https://developers.google.com/webmaster-tools/v1/sites/list
- search analytics: POST {api}/sites/{siteUrl}/searchAnalytics/query with {startDate, endDate, dimensions,
  type, dimensionFilterGroups, aggregationType, rowLimit (at most 25,000), startRow, dataState} ->
  {rows: [{keys, clicks, impressions, ctr, position}], responseAggregationType}; paged with startRow
  until a page comes back short.
  https://developers.google.com/webmaster-tools/v1/searchanalytics/query
- URL inspection: POST {inspect}/urlInspection/index:inspect with {inspectionUrl, siteUrl, languageCode}
  -> {inspectionResult: {inspectionResultLink, indexStatusResult: {verdict, coverageState,
  robotsTxtState, indexingState, lastCrawlTime, pageFetchState, googleCanonical, userCanonical,
  sitemap, referringUrls, crawledAs}}}
  https://developers.google.com/webmaster-tools/v1/urlInspection.index/inspect
- sitemaps list: GET {api}/sites/{siteUrl}/sitemaps -> {sitemap: [{path, lastSubmitted, isPending,
  lastDownloaded, warnings, errors, contents: [{type, submitted, indexed}]}]}
  https://developers.google.com/webmaster-tools/v1/sitemaps/list
- errors: {error: {code, message, status}}; 429 RESOURCE_EXHAUSTED, 403 PERMISSION_DENIED,
  401 UNAUTHENTICATED (https://developers.google.com/webmaster-tools/limits).
- OAuth token refresh and revocation: POST https://oauth2.googleapis.com/token (google-auth does it),
  POST https://oauth2.googleapis.com/revoke with `token`
  (https://developers.google.com/identity/protocols/oauth2/web-server#tokenrevoke).

Every base URL is a setting, so tests run this against a local stand-in of these endpoints.
"""

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, Final
from urllib.parse import quote

import google.auth.exceptions
import google.auth.transport
import httpx2 as httpx
from attrs import frozen
from google.oauth2 import credentials as oauth2_credentials
from google.oauth2 import service_account

from siteaudit.domain.console import ConsoleProperty, Inspection, PageDay, permission_of
from siteaudit.domain.ids import SiteId
from siteaudit.ports.searchconsole import (
    ConsoleError,
    ConsolePermissionDenied,
    ConsoleQuotaExceeded,
    ConsoleTokenInvalid,
    QueryDay,
    Sitemap,
)

log = logging.getLogger(__name__)

SCOPE: Final = "https://www.googleapis.com/auth/webmasters.readonly"  # read-only
MAX_ROW_LIMIT: Final = 25_000


@frozen
class GoogleEndpoints:
    """Where the Search Console API lives (SITEAUDIT_GSC_*_URL settings)."""

    api: str = "https://www.googleapis.com/webmasters/v3"
    inspect: str = "https://searchconsole.googleapis.com/v1"
    token: str = "https://oauth2.googleapis.com/token"
    revoke: str = "https://oauth2.googleapis.com/revoke"


class _Response(google.auth.transport.Response):
    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        return dict(self._response.headers)

    @property
    def data(self) -> bytes:
        return self._response.content


class HttpxAuthRequest(google.auth.transport.Request):
    """google-auth's transport over httpx2 (it ships requests/urllib3 ones; this project has one client)."""

    def __init__(self, client: httpx.Client) -> None:
        self._client = client

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> _Response:
        try:
            response = self._client.request(
                method, url, content=body, headers=dict(headers or {}), timeout=timeout or 30.0
            )
        except httpx.HTTPError as exc:
            raise google.auth.exceptions.TransportError(  # type: ignore[no-untyped-call]
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return _Response(response)


def _error_message(response: httpx.Response) -> str:
    try:
        error = response.json().get("error", {})
        return str(error.get("message") or error.get("status") or response.reason_phrase)[:300]
    except (ValueError, AttributeError):
        return response.reason_phrase


def _time(raw: object) -> datetime | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None


def _int(raw: object) -> int:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return int(raw)
    if isinstance(raw, str):  # int64 fields come as strings
        try:
            return int(float(raw))
        except ValueError:
            return 0
    return 0


class GoogleSearchConsole:
    """`SearchConsole` over one set of google-auth credentials (a service account or an OAuth grant)."""

    demo: Final = False

    def __init__(
        self,
        credentials: Any,
        endpoints: GoogleEndpoints,
        client: httpx.Client,
        *,
        row_limit: int = MAX_ROW_LIMIT,
    ) -> None:
        self._credentials = credentials
        self._endpoints = endpoints
        self._client = client
        self._auth = HttpxAuthRequest(client)
        self._row_limit = max(1, min(row_limit, MAX_ROW_LIMIT))

    # --- transport -------------------------------------------------------------------------------------

    def _refresh(self) -> None:
        try:
            self._credentials.refresh(self._auth)
        except google.auth.exceptions.RefreshError as exc:
            raise ConsoleTokenInvalid(f"the token could not be refreshed: {str(exc)[:200]}") from None
        except google.auth.exceptions.TransportError as exc:
            raise ConsoleError(f"the token endpoint could not be reached: {exc}") from None
        except google.auth.exceptions.GoogleAuthError as exc:  # a malformed answer or credential
            raise ConsoleError(f"the token could not be obtained: {str(exc)[:200]}") from None

    def _call(self, method: str, url: str, body: Mapping[str, Any] | None = None) -> Any:
        for attempt in range(2):
            if not self._credentials.valid:
                self._refresh()
            headers: dict[str, str] = {"Accept": "application/json"}
            self._credentials.apply(headers)
            try:
                response = self._client.request(
                    method,
                    url,
                    content=None if body is None else json.dumps(body).encode(),
                    headers={**headers, **({} if body is None else {"Content-Type": "application/json"})},
                )
            except httpx.HTTPError as exc:
                raise ConsoleError(f"the console API could not be reached: {type(exc).__name__}") from None
            if response.status_code == 401 and attempt == 0:
                self._refresh()  # the access token expired or was revoked early: one fresh token
                continue
            if response.status_code == 401:
                raise ConsoleTokenInvalid(_error_message(response))
            if response.status_code == 403:
                raise ConsolePermissionDenied(_error_message(response))
            if response.status_code == 429:
                raise ConsoleQuotaExceeded(_error_message(response))
            if response.status_code >= 400:
                raise ConsoleError(
                    f"the console API answered {response.status_code}: {_error_message(response)}"
                )
            try:
                return response.json()
            except ValueError:
                raise ConsoleError("the console API answered something that is not JSON") from None
        raise AssertionError("unreachable")

    def _site(self, property_url: str) -> str:
        return f"{self._endpoints.api}/sites/{quote(property_url, safe='')}"

    def _rows(self, property_url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        while True:
            page = self._call(
                "POST",
                f"{self._site(property_url)}/searchAnalytics/query",
                {**body, "rowLimit": self._row_limit, "startRow": len(rows)},
            )
            got = page.get("rows") or [] if isinstance(page, dict) else []
            rows.extend(r for r in got if isinstance(r, dict))
            if len(got) < self._row_limit:
                return rows

    # --- SearchConsole ---------------------------------------------------------------------------------

    def properties(self) -> Sequence[ConsoleProperty]:
        answer = self._call("GET", f"{self._endpoints.api}/sites")
        entries = answer.get("siteEntry") or [] if isinstance(answer, dict) else []
        return [
            ConsoleProperty(str(e["siteUrl"]), permission_of(str(e.get("permissionLevel", ""))))
            for e in entries
            if isinstance(e, dict) and e.get("siteUrl")
        ]

    def page_days(self, property_url: str, *, start: date, end: date) -> Sequence[PageDay]:
        rows = self._rows(
            property_url,
            {
                "startDate": start.isoformat(),
                "endDate": end.isoformat(),
                "dimensions": ["page", "date"],
                "type": "web",
                "aggregationType": "byPage",
            },
        )
        days = []
        for row in rows:
            keys = row.get("keys") or []
            if len(keys) != 2:
                continue
            try:
                day = date.fromisoformat(str(keys[1]))
            except ValueError:
                continue
            position = row.get("position")
            days.append(
                PageDay(
                    site_id=SiteId(0),
                    day=day,
                    url=str(keys[0]),
                    clicks=_int(row.get("clicks")),
                    impressions=_int(row.get("impressions")),
                    position=float(position) if isinstance(position, int | float) else None,
                )
            )
        return days

    def query_days(
        self, property_url: str, *, start: date, end: date, page: str | None = None
    ) -> Sequence[QueryDay]:
        body: dict[str, Any] = {
            "startDate": start.isoformat(),
            "endDate": end.isoformat(),
            "dimensions": ["page", "query"],
            "type": "web",
        }
        if page is not None:
            body["dimensionFilterGroups"] = [
                {
                    "groupType": "and",
                    "filters": [{"dimension": "page", "operator": "equals", "expression": page}],
                }
            ]
        out = []
        for row in self._rows(property_url, body):
            keys = row.get("keys") or []
            if len(keys) != 2:
                continue
            position = row.get("position")
            out.append(
                QueryDay(
                    url=str(keys[0]),
                    query=str(keys[1]),
                    clicks=_int(row.get("clicks")),
                    impressions=_int(row.get("impressions")),
                    position=float(position) if isinstance(position, int | float) else None,
                )
            )
        return out

    def inspect(self, property_url: str, url: str) -> Inspection:
        answer = self._call(
            "POST",
            f"{self._endpoints.inspect}/urlInspection/index:inspect",
            {"inspectionUrl": url, "siteUrl": property_url, "languageCode": "en-US"},
        )
        result = (answer.get("inspectionResult") or {}) if isinstance(answer, dict) else {}
        status = result.get("indexStatusResult") or {}

        def text(name: str) -> str | None:
            value = status.get(name)
            return str(value) if value else None

        return Inspection(
            url=url,
            verdict=text("verdict") or "VERDICT_UNSPECIFIED",
            coverage_state=text("coverageState") or "",
            indexing_state=text("indexingState"),
            robots_txt_state=text("robotsTxtState"),
            page_fetch_state=text("pageFetchState"),
            last_crawled=_time(status.get("lastCrawlTime")),
            google_canonical=text("googleCanonical"),
            user_canonical=text("userCanonical"),
            sitemaps=tuple(str(s) for s in status.get("sitemap") or ()),
        )

    def sitemaps(self, property_url: str) -> Sequence[Sitemap]:
        answer = self._call("GET", f"{self._site(property_url)}/sitemaps")
        entries = answer.get("sitemap") or [] if isinstance(answer, dict) else []
        return [
            Sitemap(
                path=str(e.get("path", "")),
                last_submitted=_time(e.get("lastSubmitted")),
                last_downloaded=_time(e.get("lastDownloaded")),
                pending=bool(e.get("isPending", False)),
                warnings=_int(e.get("warnings")),
                errors=_int(e.get("errors")),
                submitted=sum(
                    _int(c.get("submitted")) for c in e.get("contents") or () if isinstance(c, dict)
                ),
            )
            for e in entries
            if isinstance(e, dict)
        ]


def oauth_credentials(
    refresh_token: str, *, endpoints: GoogleEndpoints, client_id: str, client_secret: str
) -> Any:
    """A team's OAuth grant: access tokens are minted from the refresh token as they expire."""
    return oauth2_credentials.Credentials(  # type: ignore[no-untyped-call]
        token=None,
        refresh_token=refresh_token,
        token_uri=endpoints.token,
        client_id=client_id,
        client_secret=client_secret,
        scopes=[SCOPE],
    )


def service_account_credentials(key_file: str, *, endpoints: GoogleEndpoints) -> Any:
    """The deployment's service account (its key file, JSON as Google issues it)."""
    credentials = service_account.Credentials.from_service_account_file(  # type: ignore[no-untyped-call]
        key_file, scopes=[SCOPE]
    )
    return credentials.with_token_uri(endpoints.token)


def revoke_token(token: str, *, endpoints: GoogleEndpoints, client: httpx.Client) -> None:
    """Revoke an OAuth grant (refresh or access token). A token Google no longer knows (400) counts as
    revoked; anything else raises ConsoleError."""
    try:
        response = client.post(
            endpoints.revoke,
            content=f"token={quote(token, safe='')}".encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
    except httpx.HTTPError as exc:
        raise ConsoleError(f"the revocation endpoint could not be reached: {type(exc).__name__}") from None
    if response.status_code not in (200, 400):
        raise ConsoleError(f"revocation answered {response.status_code}")
