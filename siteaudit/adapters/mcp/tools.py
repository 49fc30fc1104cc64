# Over 500 lines: the one declaration table of every tool (schema, description, annotations), so none is forgotten.
"""The agent tools: one per caller-facing capability of the application, each declared once here.

A tool names the application methods it calls (`uses`). `NOT_TOOLS` is the one list of application
methods that have no tool, each with the reason; a test fails when an application method is in neither,
so a use case added to the interface cannot be forgotten here. Every tool answers with the JSON its REST
endpoint answers (the same views render it) and a short text summary saying what to call next.
"""

# Over 400 lines: the tool table itself, one declaration per tool with the text a model reads.

from collections.abc import Mapping, Sequence
from typing import Any, Final

from siteaudit.adapters.mcp.derived import derived_tools
from siteaudit.adapters.mcp.params import Param
from siteaudit.adapters.mcp.spec import Call, ToolSpec
from siteaudit.adapters.rest import views
from siteaudit.domain.audit import AuditRequest, AuditTrigger
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.ids import MAX_ID, SiteId
from siteaudit.domain.scope import (
    MAX_KEEP_PARAMS,
    MAX_LISTED_URLS,
    MAX_PARAM_CHARS,
    MAX_PATTERN_CHARS,
    MAX_PATTERNS,
    QueryParams,
)
from siteaudit.domain.site import (
    MAX_PAGES_CEILING,
    MAX_RPS,
    MAX_URL_LENGTH,
    MIN_RPS,
)
from siteaudit.ports.application import (
    AuditStarted,
)
from siteaudit.ports.usecases import Declared, Tool

# Application methods with no tool, and why. The only list of its kind (docs/agents.md "Agents and MCP": key
# management, the webhook secret and device approval stay in the app).
NOT_TOOLS: Final[Mapping[str, str]] = {
    "authenticate": "the door itself: every tool call is authenticated by the key",
    "authenticate_and_hit": "the door itself: the key let in and the request counted, in one round trip",
    # Key management and the webhook secret: in the app only (docs/app.md).
    "create_key": "key management is done in the app",
    "rotate_key": "key management is done in the app",
    "revoke_key": "key management is done in the app",
    "list_keys": "key management is done in the app",
    "whoami": "key management is done in the app",
    "webhook_secret": "the webhook secret is shown and rotated in the app only",
    "billing_change_plan": "plan changes are made in the app (docs/rest-api.md, Billing)",
    "ensure_local_owner": "first run of the embedded service",
    # Administration (support, the CLI's admin commands).
    "create_user": "administration",
    "create_team": "administration",
    "add_member": "administration",
    "remove_member": "administration",
    "set_plan": "administration",
    "grant_credits": "administration",
    "list_users": "administration",
    "list_teams": "administration",
    "list_team_sites": "administration (support)",
    "verify_site_by_hand": "administration (support)",
    # Work the service does by itself (workers, the scheduler, metrics).
    "run_crawl_slice": "worker",
    "arun_crawl_slice": "worker (its slice loop)",
    "finalize_audit": "worker",
    "deliver_webhooks": "worker",
    "reap_stalled_audits": "worker",
    "dispatch_due_site_audits": "scheduler",
    "recheck_site_proofs": "scheduler",
    "archive_audits": "periodic job",
    "audits_by_status": "metrics",
    "audit_progress": "the app's live progress; the tool get_audit answers the pages and the rate",
    "list_audits": "the app's audits page, filtered by status; the tool list_audits is the declared list "
    "(GET /v1/crawls)",
    "export_rows": "a file to download (GET /v1/crawls/{id}/export), not an answer to read: the paged "
    "issue and page tools read the same rows",
    # Kept to the app (docs/app.md): the browser's sign-in and sessions, device approval,
    # the team's members and invites, the billing page; and what no key calls (the device flow itself,
    # the payment provider's webhook and the local test checkout page, the console connection).
    "app_viewer": "the app's sign-in session (a browser, not a key)",
    "sign_in": "the app's sign-in (a browser, not a key)",
    "sign_up": "the app's sign-up (a browser, not a key)",
    "sign_up_open": "the app's sign-up (a browser, not a key)",
    "sign_out": "the app's sessions (a browser, not a key)",
    "switch_team": "the app's sessions (a browser, not a key)",
    "confirm_password": "the app's sessions (a browser, not a key)",
    "password_link": "passwords are set in the app",
    "request_password_reset": "passwords are set in the app",
    "reset_password": "passwords are set in the app",
    "set_password": "passwords are set in the app",
    "team_members": "team members are managed in the app",
    "invite_member": "team members are managed in the app",
    "remove_team_member": "team members are managed in the app",
    "device_login_to_decide": "device approval is done in the app (docs/app.md)",
    "approve_device_login": "device approval is done in the app (docs/app.md)",
    "deny_device_login": "device approval is done in the app (docs/app.md)",
    "start_device_login": "the device flow itself needs no key: `siteaudit connect` calls /v1/device/*",
    "poll_device_login": "the device flow itself needs no key: `siteaudit connect` calls /v1/device/*",
    "cancel_device_login": "the device flow itself needs no key: `siteaudit connect` calls /v1/device/*",
    "billing_status": "the app's billing page; /v1 has no billing status",
    "receive_payment_event": "the payment provider's webhook",
    "open_test_checkout": "the local provider's test checkout page (a browser)",
    "complete_test_checkout": "the local provider's test checkout page (a browser)",
    "renew_test_subscription": "the local provider's TEST renewal on the app's billing page",
    "grant_subscription_months": "scheduler: a subscription's monthly credits",
    "connect_search_console": "administration (the console connection)",
    "disconnect_search_console": "administration (the console connection)",
    "sync_search_consoles": "scheduler",
    "console_page_totals": "read by fix impact inside the service; /v1 has no endpoint of its own",
    # Fix tasks and rechecks (docs/rest-api.md "Fix tasks and rechecks"): the recheck runs and the reaper are
    # the workers' work.
    "run_recheck": "worker",
    "measure_fix_impacts": "scheduler: the daily measuring pass",
    "reap_stalled_rechecks": "worker",
    # The declared use cases: their tools call `handle` (`derived.py`), listed from `use_cases`.
    "use_cases": "the doors read the declared use cases to derive their tools",
}


def _started(started: AuditStarted) -> dict[str, Any]:
    return views.started_answer(started)


# --- account -----------------------------------------------------------------------------------------


def _ping(call: Call) -> dict[str, Any]:
    return {"user_id": call.caller.user_id}


# --- audits ------------------------------------------------------------------------------------------


# What the audit covers (docs/audits.md), as the declared start_site_audit offers it.
SCOPE_PARAMS: Final = (
    Param(
        "urls",
        "urls",
        "Audit exactly these URLs (one origin), nothing followed.",
        low=1,
        high=MAX_LISTED_URLS,
        min_length=1,
        max_length=MAX_URL_LENGTH,
    ),
    Param("sitemap_only", "boolean", "Audit only what the sitemaps list."),
    Param(
        "include",
        "urls",
        "Keep only URLs matching one: /path prefix or * glob.",
        high=MAX_PATTERNS,
        max_length=MAX_PATTERN_CHARS,
    ),
    Param("exclude", "urls", "Leave out URLs matching one.", high=MAX_PATTERNS, max_length=MAX_PATTERN_CHARS),
    Param("query_params", "string", "Query strings.", choices=tuple(m.value for m in QueryParams)),
    Param(
        "keep_params",
        "urls",
        "Parameters keep_listed keeps.",
        high=MAX_KEEP_PARAMS,
        max_length=MAX_PARAM_CHARS,
    ),
)


def _start_audit(call: Call) -> dict[str, Any]:
    a = call.args
    request = AuditRequest(
        url=a["url"],
        site_id=None if a["site_id"] is None else SiteId(a["site_id"]),
        max_pages=a["max_pages"],
        concurrency=a["concurrency"],
        max_rps=a["max_rps"],
        webhook_url=a["webhook_url"],
        verify_token=a["verify_token"],
        trigger=AuditTrigger.API,
        render=a["render"],
        urls=None if a["urls"] is None else tuple(a["urls"]),
        sitemap_only=bool(a["sitemap_only"]),
        include=None if a["include"] is None else tuple(a["include"]),
        exclude=None if a["exclude"] is None else tuple(a["exclude"]),
        query_params=None if a["query_params"] is None else QueryParams(a["query_params"]),
        keep_params=None if a["keep_params"] is None else tuple(a["keep_params"]),
    )
    if request.url is None and request.site_id is None and request.urls is None:
        raise ValidationFailed({"url": "url is required unless site_id or urls is given"})
    return _started(call.application.start_audit(request, call.caller))


def _started_summary(answer: dict[str, Any]) -> str:
    return (
        f"Audit {answer['crawl_id']} queued; {answer['estimated_credits']:g} credits reserved (the unused "
        f"part is refunded), {answer['max_rps']:g} requests/s. Call wait_for_audit with crawl_id "
        f"{answer['crawl_id']}, then get_report."
    )


MAX_PAGES_TEXT = "Page cap (default 10,000, capped by the plan); over 500 needs a verified site."
MAX_RPS_TEXT = "Requests/s, default 2; over 3 needs a verified site."
RENDER = Param(
    "render",
    "boolean",
    "Render JavaScript: 5 credits a page instead of 1.",
)

HAND_WRITTEN: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        name="ping",
        title="Check the API key",
        description="Check that the API key works; answers your user id.",
        uses=(),
        run=_ping,
        summary=lambda a: f"The key works (user {a['user_id']}). Call get_account for credits.",
        answer="Ping",
    ),
    ToolSpec(
        name="start_audit",
        title="Start an audit",
        description=(
            "Audit a public website for SEO problems; answers crawl_id at once. COSTS CREDITS: 1 a page "
            "up to max_pages, unused refunded. Then wait_for_audit."
        ),
        uses=("start_audit",),
        run=_start_audit,
        summary=_started_summary,
        params=(
            Param(
                "url",
                "string",
                "Start URL (http/https); or give site_id.",
                min_length=1,
                max_length=MAX_URL_LENGTH,
            ),
            Param(
                "site_id",
                "integer",
                "A registered site: its settings, charged to the team owner.",
                low=1,
                high=MAX_ID,
            ),
            Param("max_pages", "integer", MAX_PAGES_TEXT, low=1, high=MAX_PAGES_CEILING),
            Param("concurrency", "integer", "Requests in flight (default 2).", low=1, high=20),
            Param("max_rps", "number", MAX_RPS_TEXT, low=MIN_RPS, high=MAX_RPS),
            Param(
                "webhook_url",
                "string",
                "https URL called when it ends.",
                min_length=1,
                max_length=MAX_URL_LENGTH,
            ),
            Param(
                "verify_token",
                "string",
                "Header value letting the site's firewall allow the crawler; not stored.",
                min_length=16,
                max_length=128,
            ),
            RENDER,
            *SCOPE_PARAMS,
        ),
        read_only=False,
        idempotent=False,
        open_world=True,
        answer="AuditStarted",
    ),
)
HAND_WRITTEN_BY_NAME: Final[Mapping[str, ToolSpec]] = {t.name: t for t in HAND_WRITTEN}


def tool_specs(use_cases: Sequence[Declared]) -> tuple[ToolSpec, ...]:
    """Every tool, in the order listed: those written here, then those of the declared use cases; a
    declared tool naming the tool it comes `after` is listed right after it."""
    listed = list(HAND_WRITTEN)
    for declared in use_cases:
        derived = derived_tools([declared])
        after = declared.tool.after if isinstance(declared.tool, Tool) else ""
        at = [spec.name for spec in listed].index(after) + 1 if after else len(listed)
        listed[at:at] = derived
    return tuple(listed)


def tools_using(tools: Sequence[ToolSpec]) -> Sequence[str]:
    """Every application method some tool calls."""
    return sorted({method for tool in tools for method in tool.uses})
