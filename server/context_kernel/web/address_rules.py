"""The fetch safety rules: which URL schemes and which IP addresses a fetch may reach.

Pure functions on strings and `ipaddress` objects, no I/O: the client calls them on the URL
of every hop and the connection backend calls them on every address a name resolves to and on
the address it actually connected to. A refusal is a `FetchBlocked` whose `rule` names the rule
("link-local/metadata address 169.254.169.254", "scheme gopher",
"private address 10.0.0.5 (strict mode)").

Always refused: link-local and cloud-metadata addresses, unspecified, multicast, broadcast and
reserved addresses. Strict mode also refuses loopback, private (RFC 1918, fc00::/7, CGNAT
100.64/10) and anything else that is not globally routable. IPv6 forms that carry an IPv4
address (IPv4-mapped, 6to4, NAT64, Teredo) are judged by the IPv4 address they lead to.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

from .errors import FetchBlocked

IPAddress = IPv4Address | IPv6Address

ALLOWED_SCHEMES = frozenset({"http", "https"})

# Metadata services that do not live in 169.254/16 (AWS over IPv6, Alibaba Cloud). They sit
# inside ranges that non-strict mode allows, so they are named on their own.
_METADATA = (IPv6Network("fd00:ec2::254/128"), IPv4Network("100.100.100.200/32"))

# (networks, rule) in the order they are tried; the first match names the refusal.
_ALWAYS_V4: tuple[tuple[tuple[IPv4Network, ...], str], ...] = (
    ((IPv4Network("169.254.0.0/16"),), "link-local/metadata address"),
    ((IPv4Network("0.0.0.0/8"),), "unspecified address"),
    ((IPv4Network("255.255.255.255/32"),), "broadcast address"),
    ((IPv4Network("224.0.0.0/4"),), "multicast address"),
    ((IPv4Network("240.0.0.0/4"),), "reserved address"),
)
_ALWAYS_V6: tuple[tuple[tuple[IPv6Network, ...], str], ...] = (
    ((IPv6Network("fe80::/10"),), "link-local/metadata address"),
    ((IPv6Network("::/128"),), "unspecified address"),
    ((IPv6Network("ff00::/8"),), "multicast address"),
)
_STRICT_V4: tuple[tuple[tuple[IPv4Network, ...], str], ...] = (
    ((IPv4Network("127.0.0.0/8"),), "loopback address"),
    ((IPv4Network("10.0.0.0/8"), IPv4Network("172.16.0.0/12"), IPv4Network("192.168.0.0/16"),
      IPv4Network("100.64.0.0/10")), "private address"),
)
_STRICT_V6: tuple[tuple[tuple[IPv6Network, ...], str], ...] = (
    ((IPv6Network("::1/128"),), "loopback address"),
    ((IPv6Network("fc00::/7"), IPv6Network("fec0::/10"), IPv6Network("64:ff9b:1::/48")), "private address"),
)

_NAT64 = IPv6Network("64:ff9b::/96")
_IPV4_TRANSLATED = IPv6Network("::ffff:0:0:0/96")  # SIIT, RFC 2765


def check_scheme(scheme: str, *, url: str = "") -> None:
    """Refuse every scheme but http and https (file, ftp, gopher, data, ...)."""
    scheme = scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        rule = f"scheme {scheme}" if scheme else "no scheme"
        raise FetchBlocked(f"Refused {url or 'URL'}: {rule} (only http and https are fetched)", rule=rule, url=url)


def parse_ip(host: str) -> IPAddress | None:
    """The address if `host` is an IP literal (brackets allowed), else None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def refusal(address: IPAddress | str, *, strict: bool) -> str | None:
    """The rule that refuses `address`, or None when it may be fetched from."""
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            form, v4 = embedded
            rule = _refusal_v4(v4, strict=strict)
            # Written the way people write it (Python before 3.13 prints ::ffff:a9fe:a9fe).
            shown = f"::ffff:{v4}" if form == "IPv4-mapped" else str(ip)
            return None if rule is None else f"{rule} (as {form} {shown})"
        return _refusal_v6(ip, strict=strict)
    return _refusal_v4(ip, strict=strict)


def check_address(address: IPAddress | str, *, strict: bool, url: str = "") -> None:
    """Raise FetchBlocked naming the rule when `address` is refused."""
    rule = refusal(address, strict=strict)
    if rule is not None:
        raise FetchBlocked(f"Refused {url or 'the fetch'}: {rule}", rule=rule, url=url, address=str(address))


def _refusal_v4(ip: IPv4Address, *, strict: bool) -> str | None:
    if any(ip in net for net in _METADATA if isinstance(net, IPv4Network)):
        return f"metadata address {ip}"
    rule = _first_match(ip, _ALWAYS_V4)
    if rule is None and strict:
        rule = _first_match(ip, _STRICT_V4)
        if rule is None and not ip.is_global:
            # Documentation, benchmarking and protocol-assignment ranges: not the public web.
            rule = "non-public address"
        return None if rule is None else f"{rule} {ip} (strict mode)"
    return None if rule is None else f"{rule} {ip}"


def _refusal_v6(ip: IPv6Address, *, strict: bool) -> str | None:
    if any(ip in net for net in _METADATA if isinstance(net, IPv6Network)):
        return f"metadata address {ip}"
    rule = _first_match(ip, _ALWAYS_V6)
    if rule is None and ip.is_reserved and ip != IPv6Address("::1"):
        # ::/8 holds loopback (judged below) but also the deprecated IPv4-compatible form.
        rule = "reserved address"
    if rule is None and strict:
        rule = _first_match(ip, _STRICT_V6)
        if rule is None and not ip.is_global:
            rule = "non-public address"
        return None if rule is None else f"{rule} {ip} (strict mode)"
    return None if rule is None else f"{rule} {ip}"


def _embedded_ipv4(ip: IPv6Address) -> tuple[str, IPv4Address] | None:
    """The IPv4 address an IPv6 address stands for, when packets to it reach that IPv4 host."""
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", ip.ipv4_mapped
    if ip in _IPV4_TRANSLATED or ip in _NAT64:
        # NAT64 (RFC 6052) and SIIT put the IPv4 address in the last 32 bits; DNS64
        # networks hand these out for every IPv4-only site, so they must not be refused whole.
        return ("NAT64" if ip in _NAT64 else "IPv4-translated"), IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    if ip.teredo is not None:
        return "Teredo", ip.teredo[1]
    return None


def _first_match(ip: IPAddress, table: Sequence[tuple[Sequence[IPv4Network | IPv6Network], str]]) -> str | None:
    for networks, rule in table:
        if any(ip in net for net in networks):
            return rule
    return None
