"""A harness's version, asked once per process (`codex --version`, `claude --version`, `pi
--version`) and kept for every Run of the same executable: Runs record it in their
provenance (`provenance.runner`), and `report`, the site, `diff` and `log` show it.

The answer is the first version number the harness prints (on stdout or stderr):
`codex-cli 0.171.0` gives `0.171.0`. A harness that prints none, fails or does not
answer in time gives `unknown (REASON)`; the Run goes on.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable

from smevals import caches

ASK_TIMEOUT = 30.0          # seconds `--version` may take
NUMBER = re.compile(r"\b\d+(?:\.\d+)+(?:[-+][0-9A-Za-z][0-9A-Za-z.+-]*)?")

# (realpath, size, mtime) of an executable -> its version, for this process
_ASKED: dict[tuple[str, int, int], str] = {}
caches.register(__name__, "_ASKED")
_LOCK = threading.Lock()

Ask = Callable[[list[str]], tuple[int | None, bytes, bytes, str | None]]


def version_of(program: str, ask: Ask) -> str:
    """The version of the executable `program`; `ask(argv)` runs it (exit code, stdout,
    stderr, why it could not run) the first time."""
    try:
        info = os.stat(program)
        key = (os.path.realpath(program), info.st_size, info.st_mtime_ns)
    except OSError as error:
        return f"unknown ({error.strerror or error})"
    with _LOCK:
        if key not in _ASKED:
            _ASKED[key] = _asked(program, ask)
        return _ASKED[key]


def _asked(program: str, ask: Ask) -> str:
    code, out, err, why = ask([program, "--version"])
    if why:
        return f"unknown ({why})"
    for stream in (out, err):
        for line in stream.decode("utf-8", "replace").splitlines():
            found = NUMBER.search(line)
            if found:
                return found.group(0)
    said = (out or err).decode("utf-8", "replace").strip().splitlines()
    if code:
        return f"unknown (--version exited with {code})"
    return f"unknown (--version said {said[0][:80]!r})" if said else \
        "unknown (--version said nothing)"
