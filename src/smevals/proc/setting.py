"""The `sandbox:` setting that a Config, a Task or a Check gives, and the Policy it makes.

```yaml
sandbox:
  backend: auto        # auto (default), bwrap, unshare, docker, podman or none
  require: true        # refuse (exit 2) where the network and other processes cannot be hidden
  network: false       # true: the network stays reachable (a harness's model endpoint)
  env: [MODEL_URL]     # variables that pass the scrubbed environment besides the usual ones
  view: private        # private (default): its own view of the files; host: the machine's
  expose: [/opt/go]    # read-only paths added to the private view (a toolchain)
  read_only: true      # view: host only: everything but the program's folder read-only
  image: python:3.11-slim   # docker and podman
  memory_mb: 1024
  processes: 64
  file_mb: 64
```

Layers merge key by key, the later winning: a Config's (or a Check's) setting, then the
Task's (`Setting.merged(config_doc.get("sandbox"), task_doc.get("sandbox"))`). SCHEMA is
the setting's JSON Schema; the packaged schemas hold the same object (tests check it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from smevals.proc.contain import BACKENDS, find
from smevals.proc.policy import DEFAULT_IMAGE, FILE_CAP, MIB, PROCESSES, VIEWS, Policy
from smevals.proc.sandbox import describe, sandbox_env

__all__ = ["SCHEMA", "Setting"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "x-expect": "a mapping of backend, require, network, env, view, expose, read_only, image, "
                "memory_mb, processes, file_mb",
    "description": "Where untrusted code runs (the agent's tools, harnesses, match_output, "
                   "command): see docs/agents.md#the-sandbox. run and grade exit 2 before "
                   "starting when this machine cannot give it.",
    "properties": {
        "backend": {"enum": list(BACKENDS), "x-expect": "one of " + ", ".join(BACKENDS),
                    "description": "auto (default): the strongest local one (bwrap, else "
                                   "unshare, else none); a named one is used or refused."},
        "require": {"type": "boolean", "x-expect": "true or false",
                    "description": "true: refuse rather than run where the network (unless "
                                   "allowed) and other processes cannot be hidden."},
        "network": {"type": "boolean", "x-expect": "true or false",
                    "description": "true: the network stays reachable; the rest stays."},
        "env": {"type": "array", "items": {"type": "string",
                                           "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                "x-expect": "a list of variable names",
                "description": "Names of variables that pass the scrubbed environment."},
        "view": {"enum": list(VIEWS), "x-expect": "private or host",
                 "description": "private (default): the code sees its workspace (at "
                                "/workspace), a private home and /tmp, the system's runtime "
                                "folders and what `expose` adds, nothing else, or is refused; "
                                "host: the machine's files too (recorded as `host view`)."},
        "expose": {"type": "array", "items": {"type": "string", "pattern": "^/"},
                   "x-expect": "a list of absolute paths",
                   "description": "Paths the private view shows read-only at their own path "
                                  "(a toolchain); each must exist where the code runs."},
        "read_only": {"type": "boolean", "x-expect": "true or false",
                      "description": "With view: host, true: everything but the program's "
                                     "folder is read-only (a mount namespace), or refused. "
                                     "The private view always is."},
        "image": {"type": "string", "minLength": 1, "pattern": "^[^\\s-]\\S*$",
                  "x-expect": "an image name",
                  "description": f"The docker/podman image (default {DEFAULT_IMAGE})."},
        "memory_mb": {"type": "integer", "minimum": 16, "maximum": 1048576,
                      "x-expect": "an integer from 16 to 1048576"},
        "processes": {"type": "integer", "minimum": 1, "maximum": 100000,
                      "x-expect": "an integer from 1 to 100000",
                      "description": f"Processes it may add (default {PROCESSES})."},
        "file_mb": {"type": "integer", "minimum": 1, "maximum": 1048576,
                    "x-expect": "an integer from 1 to 1048576",
                    "description": f"The largest file it may write, MiB (default "
                                   f"{FILE_CAP // MIB})."},
    },
}


@dataclass(frozen=True)
class Setting:
    """A `sandbox:` setting, every key with its default (see the module's docstring)."""

    backend: str = "auto"
    require: bool = False
    network: bool = False
    env: tuple[str, ...] = ()
    image: str = DEFAULT_IMAGE
    view: str = "private"
    expose: tuple[str, ...] = ()
    read_only: bool | None = None       # None: the caller's default (see `policy`)
    memory_mb: int | None = None        # None: the caller's default
    processes: int = PROCESSES
    file_mb: int = FILE_CAP // MIB

    @classmethod
    def merged(cls, *layers: object) -> Setting:
        """The setting of `layers` (mappings or None), later keys winning; ValueError
        naming the key when a layer is not of the setting's shape."""
        setting = cls()
        for layer in layers:
            if layer is None:
                continue
            if not isinstance(layer, Mapping):
                raise ValueError("sandbox: expected a mapping")
            changes: dict[str, Any] = {str(k): _value(k, v) for k, v in layer.items()}
            setting = replace(setting, **changes)
        return setting

    @property
    def given(self) -> bool:
        """Whether anything differs from the defaults."""
        return self != Setting()

    def policy(self, timeout: float, home: Path, *, cap: int = 1024 * 1024,
               memory_mb: int = 1024, environ: Mapping[str, str] | None = None,
               read_only: bool = False) -> Policy:
        """The Policy of code run with this setting in `home` (its private folder).
        `read_only` (with `view: host` only: the private view always is read-only outside
        the program's folders): where the setting does not say, make everything but the
        program's folder and its home read-only wherever this machine can (the agent's
        `bash` and `command` ask for it; elsewhere the root stays writable as it was)."""
        env = sandbox_env(os.environ if environ is None else environ, home, self.env)
        if self.read_only is not None:
            read_only = self.read_only
        elif read_only:
            read_only = self.view == "host" and find(self.backend, self.network, True) \
                is not None
        return Policy(timeout, env, memory_mb=self.memory_mb or memory_mb, cap=cap,
                      network=self.network, processes=self.processes, file_mb=self.file_mb,
                      backend=self.backend, require=self.require, image=self.image,
                      read_only=read_only, view=self.view, expose=self.expose)

    def describe(self) -> str:
        """What contains code run with this setting here (`sandbox.describe`);
        SandboxRefused where this machine cannot give it."""
        return describe(self.policy(1.0, Path("/"), environ={}))


_KINDS: dict[str, type] = {"backend": str, "require": bool, "network": bool, "env": tuple,
                           "view": str, "expose": tuple, "read_only": bool, "image": str,
                           "memory_mb": int, "processes": int, "file_mb": int}


def _value(key: object, value: object) -> Any:
    """`value` for the key, checked against SCHEMA's types (what `validate` already saw)."""
    kind = _KINDS.get(key) if isinstance(key, str) else None
    if kind is None:
        raise ValueError(f"sandbox: unknown key {key!r} (allowed: {', '.join(_KINDS)})")
    if kind is tuple and isinstance(value, list) and all(isinstance(v, str) for v in value) \
            and (key != "expose" or all(v.startswith("/") for v in value)):
        return tuple(value)
    if kind is int and isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if kind is bool and isinstance(value, bool):
        return value
    if kind is str and isinstance(value, str) and value and (
            key != "backend" or value in BACKENDS) and (key != "view" or value in VIEWS):
        return value
    raise ValueError(f"sandbox.{key}: invalid value {value!r}")
