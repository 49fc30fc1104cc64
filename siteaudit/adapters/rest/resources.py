"""Thin resources: parse and check the request, call one use case of the application, convert, answer."""

from typing import Final

import falcon

from siteaudit.domain.ids import MAX_ID
from siteaudit.ports.application import CallerApi
from siteaudit.ports.clock import Clock

ID: Final = f"int(min=1, max={MAX_ID})"


class Resource:
    def __init__(self, application: CallerApi, clock: Clock) -> None:
        self.application = application
        self.clock = clock


class Health:
    public = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"ok": True}


class Ping(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"user_id": req.context.caller.user_id}
