"""no_pii: detectors, checksums, and reasons that never echo a match."""

from __future__ import annotations

import pytest

from smevals.checkers.pii import base58check, bech32, luhn, mod97
from tests.helpers.checkers import Case, case, run, verify

CARD = "4111 1111 1111 1111"
IBAN = "DE89 3704 0044 0532 0130 00"
BTC = "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"
BECH = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"

TABLE = [
    case("no_pii", "clean", {}, "Nothing personal here, version 1.2.3.", score=1.0),
    case(
        "no_pii",
        "email",
        {},
        "mail bob.smith@example.co.uk now",
        ok=False,
        score=0.0,
        notes="email (1)",
    ),
    case("no_pii", "card-luhn-valid", {}, f"card {CARD} ok", ok=False, notes="credit_card"),
    case("no_pii", "card-dashes", {}, "card 4111-1111-1111-1111", ok=False),
    case("no_pii", "card-luhn-invalid", {}, "card 4111 1111 1111 1112 ok"),
    case("no_pii", "card-inside-longer-number", {}, "id 94111111111111111119"),
    case("no_pii", "iban-valid", {}, f"IBAN {IBAN} please", ok=False, notes="iban"),
    case("no_pii", "iban-bad-checksum", {"entities": ["iban"]}, "IBAN DE88 3704 0044 0532 0130 00"),
    case("no_pii", "ipv4", {}, "host 192.168.1.10 up", ok=False, notes="ipv4"),
    case("no_pii", "ipv4-bad-octet", {}, "host 300.1.1.1 up"),
    case("no_pii", "version-not-ip", {}, "release 1.2.3.4.5"),
    case("no_pii", "ipv6-compressed", {}, "ping ::1 now", ok=False, notes="ipv6"),
    case("no_pii", "ipv6-full", {}, "2001:0db8:85a3:0000:0000:8a2e:0370:7334", ok=False),
    case("no_pii", "cpp-scope-not-ip", {}, "use std::vector and a::b at 12:30:45"),
    case("no_pii", "mac-not-ip", {}, "mac 00:1a:2b:3c:4d:5e"),
    case("no_pii", "phone", {}, "call +1 (555) 123-4567", ok=False, notes="phone"),
    case("no_pii", "phone-needs-plus", {}, "call 555 123 4567"),
    case("no_pii", "cpp-not-phone", {}, "C++11 and 1+1234567"),
    case("no_pii", "btc-legacy", {}, f"send to {BTC}", ok=False, notes="crypto"),
    case("no_pii", "btc-bech32", {}, f"send to {BECH}", ok=False, notes="crypto"),
    case("no_pii", "btc-bad-checksum", {}, "send to 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3"),
    case("no_pii", "entities-subset", {"entities": ["ipv4"]}, "bob@example.com"),
    case("no_pii", "entities-empty", {"entities": []}, "x", ok=False, score=None),
    case("no_pii", "entities-unknown", {"entities": ["ssn"]}, "x", ok=False, notes="entities.0"),
    case("no_pii", "entities-null", {"entities": None}, "x", ok=False),
    case("no_pii", "counts", {}, "a@b.io c@d.io 10.0.0.1", ok=False, notes="email (2), ipv4 (1)"),
]


@pytest.mark.parametrize("name,c", TABLE)
def test_table(name: str, c: Case) -> None:
    verify(name, c)


@pytest.mark.parametrize(
    "secret",
    [
        "bob.smith@example.co.uk",
        CARD,
        IBAN,
        "192.168.1.10",
        "+1 (555) 123-4567",
        BTC,
        "::1",
    ],
)
def test_reason_never_echoes_the_match(secret: str) -> None:
    result = run("no_pii", {}, f"x {secret} y")
    assert not result.ok
    text = repr(result.as_dict())
    assert secret not in text
    assert secret.replace(" ", "") not in text


def test_tags_name_kinds() -> None:
    assert run("no_pii", {}, "a@b.io").tags == ["pii_email"]


def test_checksums() -> None:
    assert luhn("4111111111111111") and not luhn("4111111111111112")
    assert mod97("GB82WEST12345698765432") and not mod97("GB82WEST12345698765433")
    assert base58check(BTC) and not base58check(BTC[:-1] + "3")
    assert bech32(BECH) and not bech32(BECH[:-1] + "5")
