"""The agent tools: one per declared use case a `Tool` binding offers (`derived.py`), and the few written
here.

A tool names the application methods it calls (`uses`). `NOT_TOOLS` is the one list of application
methods that have no tool, each with the reason; a test fails when an application method is in neither,
so a use case added to the interface cannot be forgotten here. Every tool answers with the JSON its REST
endpoint answers (the same views render it) and a short text summary saying what to call next.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Final

from siteaudit.adapters.mcp.derived import derived_tools
from siteaudit.adapters.mcp.spec import Call, ToolSpec
from siteaudit.ports.usecases import Declared, Tool

# Application methods with no tool, and why. The only list of its kind (docs/agents.md "Agents and MCP": key
# management, the webhook secret and device approval stay in the app).
NOT_TOOLS: Final[Mapping[str, str]] = {
    "authenticate": "the door itself: every tool call is authenticated by the key",
    "authenticate_and_hit": "the door itself: the key let in and the request counted, in one round trip",
    "handle_admitted": "the REST door itself: a use case handled with what the key's round trip read",
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


# --- account -----------------------------------------------------------------------------------------


def _ping(call: Call) -> dict[str, Any]:
    return {"user_id": call.caller.user_id}


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
