"""The fetch address rules (web/address_rules.py): which schemes and addresses a fetch may reach."""

from __future__ import annotations

import pytest

from context_kernel.web.address_rules import check_address, check_scheme, parse_ip, refusal
from context_kernel.web.errors import FetchBlocked

ALWAYS_REFUSED = [
    ("169.254.169.254", "link-local/metadata address 169.254.169.254"),
    ("169.254.0.1", "link-local/metadata address 169.254.0.1"),
    ("fe80::1", "link-local/metadata address fe80::1"),
    ("fe80::1%eth0", "link-local/metadata address fe80::1%eth0"),
    ("fd00:ec2::254", "metadata address fd00:ec2::254"),
    ("100.100.100.200", "metadata address 100.100.100.200"),
    ("0.0.0.0", "unspecified address 0.0.0.0"),
    ("0.1.2.3", "unspecified address 0.1.2.3"),
    ("::", "unspecified address ::"),
    ("224.0.0.1", "multicast address 224.0.0.1"),
    ("ff02::1", "multicast address ff02::1"),
    ("255.255.255.255", "broadcast address 255.255.255.255"),
    ("240.0.0.1", "reserved address 240.0.0.1"),
    ("::127.0.0.1", "reserved address ::7f00:1"),  # deprecated IPv4-compatible form
    ("::ffff:169.254.169.254", "link-local/metadata address 169.254.169.254 (as IPv4-mapped ::ffff:169.254.169.254)"),
    ("2002:a9fe:a9fe::1", "link-local/metadata address 169.254.169.254 (as 6to4 2002:a9fe:a9fe::1)"),
    ("64:ff9b::a9fe:a9fe", "link-local/metadata address 169.254.169.254 (as NAT64 64:ff9b::a9fe:a9fe)"),
    ("::ffff:0:a9fe:a9fe", "link-local/metadata address 169.254.169.254 (as IPv4-translated ::ffff:0:a9fe:a9fe)"),
    ("::ffff:0.0.0.0", "unspecified address 0.0.0.0 (as IPv4-mapped ::ffff:0.0.0.0)"),
]

STRICT_ONLY = [
    ("127.0.0.1", "loopback address 127.0.0.1 (strict mode)"),
    ("127.9.9.9", "loopback address 127.9.9.9 (strict mode)"),
    ("::1", "loopback address ::1 (strict mode)"),
    ("10.0.0.5", "private address 10.0.0.5 (strict mode)"),
    ("172.16.0.1", "private address 172.16.0.1 (strict mode)"),
    ("172.31.255.255", "private address 172.31.255.255 (strict mode)"),
    ("192.168.1.1", "private address 192.168.1.1 (strict mode)"),
    ("100.64.0.1", "private address 100.64.0.1 (strict mode)"),
    ("fc00::1", "private address fc00::1 (strict mode)"),
    ("fd12:3456::1", "private address fd12:3456::1 (strict mode)"),
    ("192.0.2.10", "non-public address 192.0.2.10 (strict mode)"),  # documentation range
    ("::ffff:10.0.0.5", "private address 10.0.0.5 (strict mode) (as IPv4-mapped ::ffff:10.0.0.5)"),
    ("2002:7f00:1::", "loopback address 127.0.0.1 (strict mode) (as 6to4 2002:7f00:1::)"),
    ("64:ff9b::a00:5", "private address 10.0.0.5 (strict mode) (as NAT64 64:ff9b::a00:5)"),
]

PUBLIC = ["93.184.215.14", "8.8.8.8", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8",
          "64:ff9b::808:808", "2002:808:808::1"]


@pytest.mark.parametrize(("address", "rule"), ALWAYS_REFUSED)
def test_link_local_unspecified_multicast_broadcast_and_reserved_are_always_refused(address: str, rule: str) -> None:
    ip = parse_ip(address)
    assert ip is not None
    assert refusal(ip, strict=False) == rule
    assert refusal(ip, strict=True) == rule


@pytest.mark.parametrize(("address", "rule"), STRICT_ONLY)
def test_loopback_and_private_addresses_are_refused_only_in_strict_mode(address: str, rule: str) -> None:
    assert refusal(address, strict=False) is None
    assert refusal(address, strict=True) == rule


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_and_their_ipv6_forms_are_allowed_even_in_strict_mode(address: str) -> None:
    assert refusal(address, strict=True) is None


def test_a_refusal_is_fetch_blocked_with_the_rule_and_address() -> None:
    with pytest.raises(FetchBlocked) as info:
        check_address("169.254.169.254", strict=False, url="http://169.254.169.254/")
    assert info.value.rule == "link-local/metadata address 169.254.169.254"
    assert info.value.address == "169.254.169.254"
    assert info.value.url == "http://169.254.169.254/"
    assert "link-local/metadata address 169.254.169.254" in str(info.value)


@pytest.mark.parametrize("scheme", ["file", "gopher", "ftp", "data", "javascript", "ws", ""])
def test_only_http_and_https_schemes_pass(scheme: str) -> None:
    with pytest.raises(FetchBlocked) as info:
        check_scheme(scheme)
    assert info.value.rule == (f"scheme {scheme}" if scheme else "no scheme")
    check_scheme("http")
    check_scheme("HTTPS")


def test_ip_literals_parse_with_or_without_brackets_and_names_do_not() -> None:
    assert str(parse_ip("[::1]")) == "::1"
    assert str(parse_ip("127.0.0.1")) == "127.0.0.1"
    assert parse_ip("example.com") is None
    assert parse_ip("2130706433") is None  # resolved (and then vetted) like any other name
