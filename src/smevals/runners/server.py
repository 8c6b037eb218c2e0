"""The model server a harness runner's Config names: `base_url:`, `api_key_env:` and, for a
harness that speaks more than one wire protocol, `api:` (runners/harness.py; each harness
turns it into what it reads: Codex a provider table, Claude Code its environment, Pi a
`models.json`).

`base_url` is the server's OpenAI-style root, `/v1` included (`http://localhost:11434/v1`),
as for `smevals:openai` and `smevals:agent`; a client of the Anthropic protocol is given it
without the `/v1` (its SDK adds `/v1/messages`). The key is read from the variable
`api_key_env` names and handed to the harness under the name it reads; the Run records
the Config (the URL and the variable's name), never the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from smevals.runners.options import ENV_NAME

APIS = ("openai-chat", "openai-responses", "anthropic-messages")
NO_KEY = "smevals-no-key"       # a key for a server that wants none (Ollama, llama.cpp)

KEYS: dict[str, Any] = {
    "base_url": {"type": "string", "pattern": r"\S", "format": "http-url"},
    "api_key_env": ENV_NAME,
}
API: dict[str, Any] = {"enum": list(APIS), "x-problem": {"enum": "must be one of "
                                                          + ", ".join(APIS)}}


@dataclass(frozen=True)
class Server:
    """Where a harness's model requests go, and with which key."""

    base_url: str                   # as the Config gives it, without a trailing slash
    key_env: str | None             # the variable holding the key, or None
    key: str = field(repr=False, default="")     # its value ("" when none or unset)
    api: str = APIS[0]

    @property
    def root(self) -> str:
        """The URL without its trailing `/v1`: what an Anthropic client is given."""
        return self.base_url.removesuffix("/v1")

    @property
    def key_or_placeholder(self) -> str:
        return self.key or NO_KEY


def server_of(config: Mapping[str, Any], environ: Mapping[str, str],
              default_api: str = APIS[0]) -> Server | None:
    """The Config's server, or None when it names none (the harness's own default)."""
    url = config.get("base_url")
    if not isinstance(url, str) or not url.strip():
        return None
    name = config.get("api_key_env")
    key_env = name if isinstance(name, str) and name else None
    key = environ.get(key_env, "").strip() if key_env else ""
    api = config.get("api")
    return Server(url.strip().rstrip("/"), key_env, key,
                  api if isinstance(api, str) and api in APIS else default_api)


def problems(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What the schema cannot say: `api_key_env` and `api` mean nothing without `base_url`."""
    if config.get("base_url") is not None:
        return []
    return [(key, "only with base_url (without it the harness uses its own provider: list "
                  "its key variable in env:)" if key == "api_key_env" else "only with base_url")
            for key in ("api_key_env", "api") if config.get(key) is not None]
