"""Processes found by their command line, for the signal tests and benchmark."""

from __future__ import annotations

import os
from pathlib import Path


def tagged(tag: str) -> list[int]:
    """Live processes whose command line holds `tag`."""
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(name))
    return found


def with_arg(arg: str) -> list[int]:
    """Live processes one of whose command-line arguments is exactly `arg` (seen from
    outside any namespace: in a PID namespace a program's own pids mean nothing here)."""
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if arg.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(name))
    return found
