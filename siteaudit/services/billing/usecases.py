"""The billing links (docs/rest-api.md "Billing"), each declared once: its inputs, its result, and how `/v1`
and the tools offer it. Every door is derived from these (docs/architecture.md, "Adding a use case"); the
handlers are in `billing.py`, with what only the service's own doors call (the app's billing page and plan
changes, the payment provider's webhook, the local test checkout). Only the team owner gets a link."""

from typing import Final

from attrs import field, frozen

from siteaudit.domain.billing import Interval, Pack, PlanName, Tier
from siteaudit.domain.error import ErrorCode
from siteaudit.ports.usecases import BODY_ERRORS, MAKES, Http, Tool, UseCase, body
from siteaudit.services.billing import doors
from siteaudit.services.billing.answers import PaymentLink

# What every billing tool says of its answer.
_ERRORS: Final = (ErrorCode.NOT_TEAM_OWNER, ErrorCode.PAYMENT_PROVIDER_FAILED)
# What every billing tool's description ends with (the link costs nothing until paid in a browser).
LINK_NOTE: Final = "Team owner only. Give the user the link; do not open it."
# The longest value of a choice the REST door reads (longer: "must have 0-10 characters").
_CHOICE_MAX: Final = 10


def _link_http(path: str, operation_id: str, summary: str, *errors: ErrorCode) -> Http:
    """A billing link's binding: a POST under `/v1/billing`, the team owner's only."""
    return Http(
        "POST",
        f"/v1/billing/{path}",
        operation_id,
        f"{summary}; team owner only",
        errors=(*_ERRORS, *errors, *BODY_ERRORS),
    )


def _link_tool(name: str, title: str, description: str, after: str) -> Tool:
    """A billing link's tool: it makes a new link each call, and its description ends with LINK_NOTE."""
    return Tool(
        name,
        title,
        f"{description} {LINK_NOTE}",
        doors.link_text,
        **MAKES,
        after=after,
    )


@frozen
class GetCreditPackLink(UseCase[PaymentLink]):
    """A checkout link for a one-time credit pack. Raises NotTeamOwner, PriceNotConfigured or
    PaymentProviderFailed."""

    pack: Pack = field(metadata=body("small or large.", max_length=_CHOICE_MAX))

    http = _link_http(
        "checkout",
        "billingCheckout",
        "Credit pack link (small: 5,000 credits for 9 USD; large: 25,000 for 29 USD)",
        ErrorCode.PRICE_NOT_CONFIGURED,
    )
    tool = _link_tool(
        "get_credit_pack_link",
        "Buy a credit pack",
        "A payment link for a credit pack (small: 5,000 credits, 9 USD; large: 25,000, 29 USD).",
        after="submit_to_indexnow",
    )


@frozen
class GetSubscriptionLink(UseCase[PaymentLink]):
    """A checkout link for a subscription (plan, monthly credits tier, interval). Raises NotTeamOwner,
    PriceNotConfigured (combination not offered), SubscriptionExists (one per account) or
    PaymentProviderFailed."""

    plan: PlanName = field(metadata=body("starter or growth.", max_length=_CHOICE_MAX))
    tier: Tier = field(metadata=body("Credits a month.", max_length=_CHOICE_MAX))
    interval: Interval = field(metadata=body("monthly or yearly.", max_length=_CHOICE_MAX))

    http = _link_http(
        "subscribe",
        "billingSubscribe",
        "Plan subscription link (one subscription per account)",
        ErrorCode.PRICE_NOT_CONFIGURED,
        ErrorCode.SUBSCRIPTION_EXISTS,
    )
    tool = _link_tool(
        "get_subscription_link",
        "Subscribe to a plan",
        "A payment link for a subscription; price_not_configured, subscription_exists.",
        after="get_credit_pack_link",
    )


@frozen
class GetBillingPortalLink(UseCase[PaymentLink]):
    """The payment provider's customer portal. Raises NotTeamOwner, NoBillingAccount (before the first
    completed purchase) or PaymentProviderFailed."""

    http = _link_http(
        "portal",
        "billingPortal",
        "Billing portal link (invoices, payment method, cancellation)",
        ErrorCode.NO_BILLING_ACCOUNT,
    )
    tool = _link_tool(
        "get_billing_portal_link",
        "Billing portal",
        "A link to the billing portal (invoices, cancellation); no_billing_account before a purchase.",
        after="get_subscription_link",
    )


# In the order the doors list them (the tool list, the remote CLI's commands).
USE_CASES: Final = (GetCreditPackLink, GetSubscriptionLink, GetBillingPortalLink)
