"""What the account use case answers (docs/rest-api.md "Credits"): shown as JSON by every door
(`converter.unstructure(result)`), read back by the HTTP client, its OpenAPI component generated from the
class. Credits are numbers as the interface shows them (an integer when whole, else one decimal)."""

from attrs import frozen


@frozen
class Account:
    """Balances and usage."""

    balance: float
    team_id: int
    team_credits: float
    crawls_total: int
    credits_spent_30d: float
    team_credits_spent_30d: float
    api_key_prefix: str
