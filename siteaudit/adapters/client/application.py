"""`HttpApplication`: the callers' API (`siteaudit.ports.application.CallerApi`) over a service's REST `/v1`.

The same calls as `LocalApplication` offers callers, so the CLI, `siteaudit mcp` and any Python program
work in-process or against a remote service alike:

    remote = HttpApplication("https://audit.example/v1")
    caller = remote.authenticate(os.environ["SITEAUDIT_API_KEY"])
    answer = remote.handle(use_case, caller)  # any declared use case: its result class, as in process

`authenticate` asks the service who a key acts for and remembers the key for that caller; every other
call sends the key of the caller it is given. Errors are the DomainErrors of the codes the service
answered (`transport.RemoteError`, `ValidationFailed`, `RateLimited`).

A declared use case (`siteaudit.ports.usecases`) needs nothing here: `handle` builds its request from its
`Http` binding and reads the answer back into its result class with the converter. A method of the
callers' API not declared yet would be one method here; mypy refuses the client while one is missing.
"""

import enum
from collections.abc import Sequence
from urllib.parse import quote

from siteaudit.adapters.answers import converter
from siteaudit.adapters.client.transport import Transport
from siteaudit.domain.account import Caller
from siteaudit.domain.error import Unauthenticated
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.ports.application import CallerApi
from siteaudit.ports.usecases import Declared, Http, Result, UseCase, fields_of, result_of


class HttpApplication(CallerApi):
    """The callers' API (`siteaudit.ports.application.CallerApi`) over `/v1`: mypy checks it offers every
    method of it with the same signature."""

    def __init__(
        self, base_url: str, *, transport: Transport | None = None, use_cases: Sequence[Declared] = ()
    ) -> None:
        """`use_cases`: the declared use cases the service offers (`siteaudit.bootstrap.USE_CASES`), which
        `use_cases()` lists for the doors built on this client (the tools of `siteaudit mcp`)."""
        self.transport = transport or Transport(base_url)
        self._keys: dict[Caller, str] = {}
        self._use_cases = tuple(use_cases)

    def use_cases(self) -> Sequence[Declared]:
        return self._use_cases

    def handle(self, use_case: UseCase[Result], caller: Caller) -> Result:
        """The use case on the service: its path, query and body from its `Http` binding and inputs, its
        answer read back into its result class."""
        declared = type(use_case)
        http = declared.http
        if not isinstance(http, Http):
            raise LookupError(f"/v1 does not offer {declared.__name__}: {http.reason}")
        path, query, body = http.path.removeprefix("/v1"), {}, {}
        for found in fields_of(declared):
            value = getattr(use_case, found.name)
            if isinstance(value, enum.Enum):
                value = value.value
            if found.spec.where == "path":
                path = path.replace(f"{{{found.name}}}", quote(str(value), safe=""))
            elif value is None:
                continue
            elif found.spec.where == "query":
                query[found.name] = found.shown(value)
            else:
                # A list of strings as it is, a list of extraction rules as their objects.
                body[found.name] = (
                    converter.unstructure(value) if isinstance(value, tuple) else found.shown(value)
                )
        has_body = any(found.spec.where == "body" for found in fields_of(declared))
        answer = self.transport.call(
            http.method, path, key=self._key(caller), params=query, body=body if has_body else None
        )
        if http.status == 204:  # no body: the result is built from the path's inputs
            answer = {
                f.name: getattr(use_case, f.name) for f in fields_of(declared) if f.spec.where == "path"
            }
        result: Result = converter.structure(answer, result_of(declared))
        return result

    def close(self) -> None:
        self.transport.close()

    def _key(self, caller: Caller) -> str:
        try:
            return self._keys[caller]
        except KeyError:
            raise Unauthenticated() from None

    # --- who calls ----------------------------------------------------------------------------------

    def authenticate(self, raw_key: str) -> Caller:
        user = self.transport.call("GET", "/ping", key=raw_key)
        account = self.transport.call("GET", "/account", key=raw_key)
        caller = Caller(
            user_id=UserId(int(user["user_id"])),
            team_id=TeamId(int(account["team_id"])),
            key_prefix=str(account["api_key_prefix"]),
        )
        self._keys[caller] = raw_key
        return caller
