"""Resolvers: the operating system's (getaddrinfo) and a fixed table for tests and embedders."""

import ipaddress
import socket
from collections.abc import Iterable, Mapping

from siteaudit.domain.network import IPAddress, NameNotResolved, parse_address
from siteaudit.ports.network import HostResolver


class SystemResolver:
    """Asks the operating system, as a browser would: hosts file, then DNS, A and AAAA together."""

    def resolve(self, host: str) -> tuple[IPAddress, ...]:
        try:
            answers = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as error:
            raise NameNotResolved(host, str(error)) from None
        addresses: list[IPAddress] = []
        for family, _, _, _, sockaddr in answers:
            if family == socket.AF_INET6:
                text, scope = str(sockaddr[0]), int(sockaddr[3])  # type: ignore[misc]
                # getaddrinfo reports a zone as a numeric scope: keep it, the policy refuses zoned addresses.
                addresses.append(parse_address(f"{text.split('%')[0]}%{scope}" if scope else text))
            elif family == socket.AF_INET:
                addresses.append(ipaddress.IPv4Address(sockaddr[0]))
        if not addresses:
            raise NameNotResolved(host, "no IPv4 or IPv6 addresses")
        return tuple(dict.fromkeys(addresses))


def _name_key(host: str) -> str:
    return host.lower().rstrip(".")


class StaticResolver:
    """Answers from a fixed table of names (case and a trailing dot ignored), else from `fallback`."""

    def __init__(
        self, hosts: Mapping[str, Iterable[str | IPAddress]], *, fallback: HostResolver | None = None
    ) -> None:
        self._hosts = {
            _name_key(name): tuple(parse_address(a) if isinstance(a, str) else a for a in answers)
            for name, answers in hosts.items()
        }
        self._fallback = fallback

    def resolve(self, host: str) -> tuple[IPAddress, ...]:
        answers = self._hosts.get(_name_key(host))
        if answers:
            return answers
        if self._fallback is not None:
            return self._fallback.resolve(host)
        raise NameNotResolved(host, "not in the table")
