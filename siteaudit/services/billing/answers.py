"""What the billing use cases answer (docs/rest-api.md "Billing"), shown as JSON by every door."""

from attrs import frozen


@frozen
class PaymentLink:
    """A payment-provider link to open in a browser; nothing is charged until checkout completes there."""

    url: str
