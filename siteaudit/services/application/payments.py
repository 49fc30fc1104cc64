"""What no key calls in billing (`Payments`, docs/billing.md): the provider's webhook and the local
provider's test checkout."""

from siteaudit.domain.billing import Fulfilment
from siteaudit.domain.ids import UserId
from siteaudit.ports.application import LocalCheckout, LocalCheckoutDone
from siteaudit.services.application.base import LocalPorts
from siteaudit.services.billing import billing as billing_services


class LocalPayments(LocalPorts):
    """`Payments` over the application's ports."""

    __slots__ = ()

    def receive_payment_event(self, payload: bytes, signature: str, client: str) -> Fulfilment:
        return self._call(billing_services.receive_event, payload, signature, client, provider=self.payments)

    def open_test_checkout(self, session_id: str, buyer: UserId) -> LocalCheckout:
        return self._call(billing_services.open_local_checkout, session_id, buyer, provider=self.payments)

    def complete_test_checkout(self, session_id: str, form_token: str, buyer: UserId) -> LocalCheckoutDone:
        return self._call(
            billing_services.complete_local_checkout, session_id, form_token, buyer, provider=self.payments
        )
