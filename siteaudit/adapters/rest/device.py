"""Device login (docs/security.md "Device login"): `POST /device/start`, `POST /device/token`, and
`POST /device/cancel` (the device gives its own login up, docs/app.md "The app at"), open to callers without
a key and limited per client address instead (docs/rest-api.md "Errors and limits"). The device code is the
cancel's credential: only the device that started the login holds it."""

from typing import Final

import falcon

from siteaudit.adapters.answers import converter
from siteaudit.adapters.rest.middleware import enforce
from siteaudit.adapters.rest.params import Fields, json_body
from siteaudit.domain.device import MAX_CLIENT_NAME_LENGTH
from siteaudit.domain.error import ErrorCode
from siteaudit.ports.application import DeviceCancel, DeviceFlow
from siteaudit.ports.clock import Clock
from siteaudit.ports.ratelimit import Limit, RateLimiter

START_PER_IP: Final = Limit(10, 3600.0)
TOKEN_PER_IP: Final = Limit(60, 60.0)
CANCEL_PER_IP: Final = Limit(60, 60.0)  # as the polls: a device cancels at most what it started
MAX_DEVICE_CODE_LENGTH: Final = 128


class _DeviceResource:
    public = True  # no key: the device login is how a machine gets one

    def __init__(self, application: DeviceFlow, clock: Clock, limiter: RateLimiter) -> None:
        self.application = application
        self.clock = clock
        self.limiter = limiter


class DeviceStart(_DeviceResource):
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        ip = req.context.client_ip
        enforce(
            self.limiter, self.clock, [(f"ip:{ip}:device-start", START_PER_IP, ErrorCode.RATE_LIMITED)], resp
        )
        fields = Fields(json_body(req, allowed=("client_name",), required=False))
        client_name = fields.string("client_name", max_length=MAX_CLIENT_NAME_LENGTH) or ""
        fields.done()
        started = self.application.start_device_login(client_name, ip)
        resp.media = converter.unstructure(started)


def _device_code(req: falcon.Request) -> str:
    fields = Fields(json_body(req, allowed=("device_code",)))
    device_code = fields.string("device_code", max_length=MAX_DEVICE_CODE_LENGTH, min_length=1)
    if device_code is None and "device_code" not in fields.bad:
        fields.bad["device_code"] = "required"
    fields.done()
    assert device_code is not None
    return device_code


class DeviceCancelResource:
    public = True  # no key: the device code is the credential

    def __init__(self, devices: DeviceCancel, clock: Clock, limiter: RateLimiter) -> None:
        self.devices = devices
        self.clock = clock
        self.limiter = limiter

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        ip = req.context.client_ip
        enforce(
            self.limiter,
            self.clock,
            [(f"ip:{ip}:device-cancel", CANCEL_PER_IP, ErrorCode.RATE_LIMITED)],
            resp,
        )
        login = self.devices.cancel_device_login(_device_code(req))
        resp.media = {"status": login.status.value}


class DeviceToken(_DeviceResource):
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        ip = req.context.client_ip
        # Past the per-address budget a poller is told what RFC 8628 clients understand: poll slower.
        enforce(
            self.limiter, self.clock, [(f"ip:{ip}:device-token", TOKEN_PER_IP, ErrorCode.SLOW_DOWN)], resp
        )
        granted = self.application.poll_device_login(_device_code(req))
        resp.media = {
            "api_key": granted.key.raw,
            "team": {"id": granted.team_id, "name": granted.team_name},
        }
