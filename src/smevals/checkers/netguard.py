"""Outbound requests of checkers (custom_webhook): resolve once, refuse private addresses,
connect to the very address that was checked, never follow a redirect, one deadline; the
request itself is the one HTTP client's (smevals/net/), its errors sorted as every call's.

Refused unless the Check allows private addresses: loopback, private (10/8, 172.16/12,
192.168/16, fc00::/7), link-local (169.254/16, fe80::/10, so cloud metadata at
169.254.169.254), shared (100.64/10), documentation, multicast, reserved and unspecified
addresses: every address that is not global unicast. An IPv6 address that carries an
IPv4 address (IPv4-mapped, IPv4-translated, IPv4-compatible, 6to4, NAT64, Teredo) is judged
by the IPv4 address(es) it carries, since that is where the packets go.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

RESPONSE_LIMIT = 1 << 20      # bytes of a webhook's answer; a longer one gets no verdict


class Refused(Exception):
    """The request is not allowed (a private address, a bad URL): the Check fails."""


class Unreachable(Exception):
    """No answer (network error, deadline): the Check has no verdict."""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    address: str


def blocked(address: str) -> str | None:
    """Why `address` may not be reached without allow_private, or None."""
    ip = ipaddress.ip_address(address)
    inside = [] if ip.version == 4 or ip.is_loopback or ip.is_unspecified \
        else embedded_ipv4(ipaddress.IPv6Address(ip))
    for form, inner in inside:
        why = _why(inner)
        if why is not None:
            return f"{why}, carried as {form} {inner}"
    return None if inside else _why(ip)


def _why(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address (cloud metadata lives there)"
    if ip.is_private or ip.is_reserved or ip.is_unspecified or ip.is_multicast \
            or not ip.is_global:
        return "a private or reserved address"
    return None


_COMPATIBLE = ipaddress.IPv6Network("::/96")          # IPv4-compatible (deprecated)
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # IPv4-translated (SIIT)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")        # NAT64, well-known prefix
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # NAT64, local use (RFC 8215)
# RFC 6052: where the IPv4 address sits behind a NAT64 prefix of each length (bit spans;
# bits 64-71 are always left out)
_NAT64_SPANS = (((96, 128),), ((72, 104),), ((56, 64), (72, 96)), ((48, 64), (72, 88)))

Embedded = list[tuple[str, ipaddress.IPv4Address]]


def embedded_ipv4(ip: ipaddress.IPv6Address) -> Embedded:
    """The IPv4 addresses `ip` carries, each with the name of its form; [] for none.

    A Teredo address carries two (the server, and the client, stored inverted); an address
    in the local-use NAT64 prefix is read at each position RFC 6052 allows, since its prefix
    length is the operator's choice."""
    if ip.ipv4_mapped is not None:
        return [("IPv4-mapped", ip.ipv4_mapped)]
    if ip.sixtofour is not None:
        return [("6to4", ip.sixtofour)]
    if ip.teredo is not None:
        server, client = ip.teredo
        return [("Teredo server", server), ("Teredo client", client)]
    value = int(ip)
    if ip in _NAT64 or ip in _TRANSLATED or ip in _COMPATIBLE:
        form = "NAT64" if ip in _NAT64 else \
            "IPv4-translated" if ip in _TRANSLATED else "IPv4-compatible"
        return [(form, ipaddress.IPv4Address(value & 0xFFFFFFFF))]
    if ip in _NAT64_LOCAL:
        return [("local-use NAT64", _bits(value, spans)) for spans in _NAT64_SPANS]
    return []


def _bits(value: int, spans: tuple[tuple[int, int], ...]) -> ipaddress.IPv4Address:
    """The IPv4 address made of these bit spans of a 128-bit value (bit 0 the highest)."""
    out = 0
    for start, end in spans:
        width = end - start
        out = (out << width) | ((value >> (128 - end)) & ((1 << width) - 1))
    return ipaddress.IPv4Address(out)


def resolve(host: str, port: int) -> str:
    """The one address the request goes to: the first that the host resolves to."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise Unreachable(f"cannot resolve host {host!r}: {error}") from None
    if not infos:
        raise Unreachable(f"host {host!r} has no address")
    return str(infos[0][4][0])


def post_json(url: str, body: bytes, timeout: float, allow_private: bool) -> Response:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused(f"not an http:// or https:// URL: {url!r}")
    https = parts.scheme == "https"
    try:
        port = parts.port or (443 if https else 80)
    except ValueError:
        raise Refused(f"bad port in {url!r}") from None
    deadline = time.monotonic() + timeout
    address = resolve(parts.hostname, port)
    why = blocked(address)
    if why and not allow_private:
        raise Refused(f"{parts.hostname} resolves to {address}, {why}; refused (set "
                      "allow_private: true on the Check to allow it)")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = parts.netloc.rpartition("@")[2]
    conn = _connection(address, port, parts.hostname if https else None,
                       max(0.01, deadline - time.monotonic()))
    return _send(conn, target, body, host_header, address, deadline)


def _connection(address: str, port: int, tls_name: str | None,
                timeout: float) -> http.client.HTTPConnection:
    if tls_name is None:
        return http.client.HTTPConnection(address, port, timeout=timeout)
    return _PinnedHTTPS(address, port, tls_name, timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """TLS to the checked address, with the certificate checked for the host name."""

    def __init__(self, address: str, port: int, name: str, timeout: float):
        super().__init__(address, port, timeout=timeout, context=ssl.create_default_context())
        self._name = name
        self._context = ssl.create_default_context()

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self._name)


def _send(conn: http.client.HTTPConnection, target: str, body: bytes, host: str,
          address: str, deadline: float) -> Response:
    from smevals.net import retry
    from smevals.net.http import HttpCall

    headers = {"Host": host, "Content-Type": "application/json", "Accept": "application/json"}
    call = HttpCall(conn, target, body, headers, limit=RESPONSE_LIMIT, setting=None)
    if not call.wait(max(0.0, deadline - time.monotonic())):
        call.abort()
        raise Unreachable("no answer before the deadline")
    error = call.error
    kind = None if error is None else retry.sort(error)
    if kind == retry.TIMEOUT:     # the socket's timeout ends with the deadline
        raise Unreachable("no answer before the deadline")
    if kind == retry.TOO_LARGE:
        raise Unreachable(str(error))
    if error is not None:
        raise Unreachable(f"{type(error).__name__}: {error}")
    assert call.reply is not None
    return Response(call.reply.status, call.reply.body, address)
