"""custom_webhook: POST {candidate, task}; private addresses and redirects refused."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

from tests.helpers import make_eval
from tests.helpers.judges import newest


def _eval(root: Path, checks: str) -> Path:
    return make_eval(root, tasks={"one": "prompt: hello one\ngrading:\n  key: 42\n"},
                     graders={"default": "checks:\n" + checks})


def test_private_addresses_are_refused(tmp_path: Path, cli, fake_openai) -> None:
    port = fake_openai.port
    ev = _eval(tmp_path / "ev", f"""\
  - {{checker: custom_webhook, name: loopback, url: "http://127.0.0.1:{port}/hook"}}
  - {{checker: custom_webhook, name: ten, url: "http://10.1.2.3/hook"}}
  - {{checker: custom_webhook, name: metadata, url: "http://169.254.169.254/latest"}}
  - {{checker: custom_webhook, name: named, url: "http://localhost:{port}/hook"}}
  - {{checker: custom_webhook, name: mapped, url: "http://[::ffff:192.168.1.1]/hook"}}
""")
    cli("run", str(ev))
    res = cli("grade", str(ev))
    assert res.code == 1, res.both
    notes = {c["name"]: c["notes"] for c in newest(ev, "one")["checks"]}
    allow = "refused (set allow_private: true on the Check to allow it)"
    assert notes == {
        "loopback": f"127.0.0.1 resolves to 127.0.0.1, a loopback address; {allow}",
        "ten": f"10.1.2.3 resolves to 10.1.2.3, a private or reserved address; {allow}",
        "metadata": ("169.254.169.254 resolves to 169.254.169.254, a link-local address "
                     f"(cloud metadata lives there); {allow}"),
        "named": f"localhost resolves to 127.0.0.1, a loopback address; {allow}",
        "mapped": (f"::ffff:192.168.1.1 resolves to ::ffff:192.168.1.1, a private or reserved "
                   f"address, carried as IPv4-mapped 192.168.1.1; {allow}"),
    }
    assert fake_openai.requests == []


def test_allow_private_posts_candidate_and_task(tmp_path: Path, cli, fake_openai) -> None:
    fake_openai.enqueue(200, {"passed": True, "score": 0.8, "reason": "fine"})
    fake_openai.enqueue(200, {"passed": False, "reason": "too short"})
    url = f"http://localhost:{fake_openai.port}/hook?x=1"
    ev = _eval(tmp_path / "ev", f"""\
  - {{checker: custom_webhook, url: "{url}", allow_private: true}}
  - {{checker: custom_webhook, url: "{url}", allow_private: true}}
""")
    cli("run", str(ev))
    res = cli("grade", str(ev))
    assert res.code == 1
    first, second = newest(ev, "one")["checks"]
    assert (first["ok"], first["score"], first["details"]["reason"]) == (True, 0.8, "fine")
    assert (second["ok"], second["score"], second["notes"]) == (False, 0.0, "webhook: too short")
    sent = fake_openai.requests[0]
    assert sent.path == "/hook?x=1"
    assert sent.headers["host"] == f"localhost:{fake_openai.port}"
    assert sent.body["candidate"] == "m1 says: hello one\n"
    assert sent.body["task"]["key"] == 42 and sent.body["task"]["prompt"] == "hello one"


def test_a_redirect_is_refused(tmp_path: Path, cli, fake_openai) -> None:
    fake_openai.enqueue(302, {}, headers={"Location": "http://169.254.169.254/"})
    ev = _eval(tmp_path / "ev", f'  - {{checker: custom_webhook, url: '
               f'"http://127.0.0.1:{fake_openai.port}/", allow_private: true}}\n')
    cli("run", str(ev))
    assert cli("grade", str(ev)).code == 1
    check = newest(ev, "one")["checks"][0]
    assert check["notes"].endswith("answered with a redirect (HTTP 302); redirects are refused")
    assert len(fake_openai.requests) == 1


def test_an_answer_without_passed_is_an_error(tmp_path: Path, cli, fake_openai) -> None:
    fake_openai.enqueue(200, {"passed": "true"})
    fake_openai.enqueue(200, {"passed": True}, delay=2)
    url = f"http://127.0.0.1:{fake_openai.port}/"
    ev = _eval(tmp_path / "ev", f"""\
  - {{checker: custom_webhook, url: "{url}", allow_private: true}}
  - {{checker: custom_webhook, url: "{url}", allow_private: true, timeout: 0.3}}
""")
    cli("run", str(ev))
    res = cli("grade", str(ev))
    assert res.code == 2, res.both
    first, second = newest(ev, "one")["checks"]
    assert first["error"] and first["notes"] == (
        f"webhook {url}: the answer needs a boolean `passed`: {{\"passed\": \"true\"}}")
    assert second["error"] and second["notes"] == f"webhook {url}: no answer before the deadline"
    assert newest(ev, "one")["outcome"] == "error"


# Each IPv6 form that carries an IPv4 address: one carrying a refused address (cloud
# metadata, a private or a documentation address) and one carrying 8.8.8.8.
CARRIERS = {
    "6to4": ("2002:a9fe:a9fe::", "169.254.169.254", "2002:808:808::"),
    "NAT64": ("64:ff9b::a9fe:a9fe", "169.254.169.254", "64:ff9b::808:808"),
    "local-use NAT64": ("64:ff9b:1::a00:1", "10.0.0.1", "64:ff9b:1:808:8:808:808:808"),
    "IPv4-mapped": ("::ffff:169.254.169.254", "169.254.169.254", "::ffff:8.8.8.8"),
    "IPv4-translated": ("::ffff:0:a00:1", "10.0.0.1", "::ffff:0:808:808"),
    "IPv4-compatible": ("::169.254.169.254", "169.254.169.254", "::808:808"),
    "Teredo client": ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "192.0.2.45",
                      "2001:0:4136:e378:8000:63bf:f7f7:f7f7"),
    "Teredo server": ("2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7", "169.254.169.254",
                      "2001:0:4136:e378:8000:63bf:f7f7:f7f7"),
}


def test_ipv6_forms_that_carry_a_refused_ipv4_address_are_refused() -> None:
    from click.testing import CliRunner

    from smevals.cli import cli

    allow = "refused (set allow_private: true on the Check to allow it)"
    for form, (address, inner, _) in CARRIERS.items():
        spec = json.dumps({"checker": "custom_webhook", "url": f"http://[{address}]/hook"})
        res = CliRunner().invoke(cli, ["check", spec, "--output", "x"])
        assert res.exit_code == 1, res.output
        why = ("a link-local address (cloud metadata lives there)" if inner.startswith("169")
               else "a private or reserved address")
        assert json.loads(res.output)["notes"] == (
            f"{address} resolves to {address}, {why}, carried as {form} {inner}; "
            f"{allow}"), form


def test_ipv6_forms_that_carry_an_allowed_ipv4_address_are_allowed() -> None:
    # judged without a request: these addresses are outside this machine
    from smevals.checkers.netguard import blocked, embedded_ipv4

    for form, (_, _, address) in CARRIERS.items():
        assert blocked(address) is None, form
        carried = dict(embedded_ipv4(ipaddress.IPv6Address(address)))
        assert form in carried and "8.8.8.8" in map(str, carried.values()), form
    assert blocked("::1") == "a loopback address"
    assert blocked("::") == "a private or reserved address"
    assert blocked("fe80::1") == "a link-local address (cloud metadata lives there)"
