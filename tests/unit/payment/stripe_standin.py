"""A local stand-in for the Stripe endpoints the adapter calls, on 127.0.0.1, and Stripe's webhook signing.

It answers the shapes of Stripe's API reference (docs.stripe.com/api): GET /v1/prices -> a list of the
`price` objects in `prices` {id, object, active, currency, unit_amount, type}; POST /v1/customers -> a
`customer` {id, object, email, metadata, ...}; POST /v1/checkout/sessions -> a `checkout.session` {id,
object, mode, status "open", payment_status "unpaid", customer, client_reference_id, metadata, url};
POST /v1/billing_portal/sessions -> a `billing_portal.session` {id, object, customer, return_url, url};
GET /v1/subscriptions/{id} -> the `subscription` kept in `subscriptions` (404 `resource_missing` for
another id); POST /v1/subscriptions/{id} with `items[0][id]`, `items[0][price]` and `metadata[...]` ->
that subscription with the item's price replaced and the metadata merged, as Stripe's update does;
errors as {error: {type, message}} with a 4xx status. Requests arrive form-encoded (`a[b][0]=c`) as the
SDK sends them; every one is recorded with its headers.

Webhook signatures follow Stripe's documented scheme (docs.stripe.com/webhooks#verify-manually; the
SDKs' `compute_signature`): header `Stripe-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "t.payload"
keyed with the endpoint's whsec_ secret>`.
"""

import hashlib
import hmac
import itertools
import json
import re
import time
from typing import Any

from attrs import define, field
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response


@define
class Call:
    path: str
    form: dict[str, str]
    headers: dict[str, str]


@define
class StripeStandIn:
    server: HTTPServer
    calls: list[Call] = field(factory=list)
    fail_next: tuple[int, str, str] | None = None  # (status, error type, message) for the next call
    subscriptions: dict[str, dict[str, Any]] = field(
        factory=dict
    )  # what GET/POST /v1/subscriptions/{id} know
    prices: dict[str, tuple[int, str]] = field(
        factory=dict
    )  # what GET /v1/prices lists: id -> amount, currency
    _ids: Any = field(factory=lambda: itertools.count(1))

    def install(self) -> "StripeStandIn":
        for path in ("/v1/customers", "/v1/checkout/sessions", "/v1/billing_portal/sessions"):
            self.server.expect_request(path, method="POST").respond_with_handler(self._answer)
        self.server.expect_request("/v1/prices", method="GET").respond_with_handler(self._answer)
        for method in ("GET", "POST"):
            self.server.expect_request(
                re.compile(r"/v1/subscriptions/[A-Za-z0-9_]+"), method=method
            ).respond_with_handler(self._answer)
        return self

    @property
    def api_base(self) -> str:
        return self.server.url_for("").rstrip("/")

    def paths(self) -> list[str]:
        return [call.path for call in self.calls]

    def _answer(self, request: Request) -> Response:
        form = {key: value for key, value in request.form.items()}
        self.calls.append(Call(request.path, form, dict(request.headers)))
        if not request.headers.get("Authorization", "").startswith("Bearer sk_test_"):
            return self._json(401, {"error": {"type": "invalid_request_error", "message": "Invalid API Key"}})
        if self.fail_next is not None:
            status, kind, message = self.fail_next
            self.fail_next = None
            return self._json(status, {"error": {"type": kind, "message": message}})
        if request.path.startswith("/v1/subscriptions/"):
            return self._subscription(request.path.rsplit("/", 1)[1], request.method, form)
        if request.path == "/v1/prices":
            listed = [
                {"id": price, "object": "price", "active": True, "currency": currency, "unit_amount": amount,
                 "type": "recurring", "livemode": False}
                for price, (amount, currency) in self.prices.items()
            ]  # fmt: skip
            return self._json(200, {"object": "list", "url": "/v1/prices", "has_more": False, "data": listed})
        n = next(self._ids)
        now = int(time.time())
        metadata = {k[len("metadata[") : -1]: v for k, v in form.items() if k.startswith("metadata[")}
        if request.path == "/v1/customers":
            body: dict[str, Any] = {
                "id": f"cus_RetroClock{n:04d}",
                "object": "customer",
                "created": now,
                "email": form.get("email"),
                "livemode": False,
                "metadata": metadata,
            }
        elif request.path == "/v1/checkout/sessions":
            session = f"cs_test_a1RetroClock{n:04d}"
            body = {
                "id": session,
                "object": "checkout.session",
                "created": now,
                "mode": form.get("mode"),
                "status": "open",
                "payment_status": "unpaid",
                "customer": form.get("customer"),
                "client_reference_id": form.get("client_reference_id"),
                "success_url": form.get("success_url"),
                "cancel_url": form.get("cancel_url"),
                "livemode": False,
                "metadata": metadata,
                "url": f"https://checkout.stripe.com/c/pay/{session}",
            }
        else:
            body = {
                "id": f"bps_1RetroClock{n:04d}",
                "object": "billing_portal.session",
                "created": now,
                "customer": form.get("customer"),
                "return_url": form.get("return_url"),
                "livemode": False,
                "url": f"https://billing.stripe.com/p/session/test_RetroClock{n:04d}",
            }
        return self._json(200, body)

    def _subscription(self, sub_id: str, method: str, form: dict[str, str]) -> Response:
        sub = self.subscriptions.get(sub_id)
        if sub is None:
            message = f"No such subscription: '{sub_id}'"
            return self._json(
                404,
                {"error": {"type": "invalid_request_error", "code": "resource_missing", "message": message}},
            )
        if method == "POST":
            items = sub["items"]["data"]
            item = next((i for i in items if i["id"] == form.get("items[0][id]")), None)
            if item is None or "items[0][price]" not in form:
                return self._json(
                    400, {"error": {"type": "invalid_request_error", "message": "Invalid items"}}
                )
            item["price"] = {"id": form["items[0][price]"], "object": "price"}
            sub["metadata"].update(
                {k[len("metadata[") : -1]: v for k, v in form.items() if k.startswith("metadata[")}
            )
        return self._json(200, sub)

    @staticmethod
    def _json(status: int, body: dict[str, Any]) -> Response:
        return Response(json.dumps(body), status=status, content_type="application/json")


def signature(payload: bytes, secret: str, *, at: int | None = None) -> str:
    moment = int(time.time()) if at is None else at
    mac = hmac.new(secret.encode(), f"{moment}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={moment},v1={mac}"


def event(event_id: str, kind: str, obj: dict[str, Any], *, created: int) -> bytes:
    """A Stripe event as a webhook delivers it (`object: event`, `data.object` the resource)."""
    return json.dumps(
        {
            "id": event_id,
            "object": "event",
            "api_version": "2026-10-28.endive",
            "created": created,
            "livemode": False,
            "pending_webhooks": 1,
            "request": {"id": None, "idempotency_key": None},
            "type": kind,
            "data": {"object": obj},
        }
    ).encode()


def checkout_object(
    session_id: str, customer: str, *, mode: str = "payment", paid: bool = True, pack: str | None = "small"
) -> dict[str, Any]:
    metadata: dict[str, str] = {"kind": "pack" if mode == "payment" else "subscription"}
    if pack is not None:
        metadata["pack"] = pack
    return {
        "id": session_id,
        "object": "checkout.session",
        "mode": mode,
        "status": "complete",
        "payment_status": "paid" if paid else "unpaid",
        "customer": customer,
        "metadata": metadata,
    }


def subscription_object(sub_id: str, customer: str, status: str, price: str) -> dict[str, Any]:
    return {
        "id": sub_id,
        "object": "subscription",
        "customer": customer,
        "status": status,
        "items": {
            "object": "list",
            "data": [{"id": "si_RetroClock", "object": "subscription_item", "price": {"id": price}}],
        },
        "metadata": {},
    }


def invoice_object(
    customer: str,
    subscription: str,
    price: str,
    *,
    start: int,
    end: int,
    reason: str = "subscription_cycle",
    proration: bool = False,
) -> dict[str, Any]:
    """A paid invoice as API versions from 2025 shape it: the subscription under
    `parent.subscription_details`, each line's price under `pricing.price_details`."""
    return {
        "id": f"in_{subscription}_{start}",
        "object": "invoice",
        "customer": customer,
        "status": "paid",
        "billing_reason": reason,
        "parent": {"type": "subscription_details", "subscription_details": {"subscription": subscription}},
        "period_start": start - (end - start),  # the previous period, as Stripe reports it
        "period_end": start,
        "lines": {
            "object": "list",
            "data": [
                {
                    "id": "il_1",
                    "object": "line_item",
                    "period": {"start": start, "end": end},
                    "pricing": {"type": "price_details", "price_details": {"price": price}},
                    "parent": {
                        "type": "subscription_item_details",
                        "subscription_item_details": {"subscription": subscription, "proration": proration},
                    },
                }
            ],
        },
    }
