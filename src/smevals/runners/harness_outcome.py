"""A harness's Run read into what smevals stores (runners/harness.py runs it): the stream
through the harness's reader (runners/events.py), each entry with the time its line came
(runners/watch.py), paths made relative to the workspace, the transcript written, the notes
and the verdict, first cause first.
"""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING, Any

from smevals.files import transcript
from smevals.runners.base import BuiltinContext, BuiltinOutcome
from smevals.runners.events import Collector, read_stream, usage_calls
from smevals.runners.harness import (
    DEFAULT_TIMEOUT,
    SHOWN_STDERR,
    STDERR_CAP,
    Harness,
    Launch,
    idle_timeout,
    stream_cap,
)
from smevals.runners.watch import LineWatch, pattern, relative, roots

if TYPE_CHECKING:
    from pathlib import Path

    from smevals.proc.sandbox import Outcome


def outcome(harness: Harness, launch: Launch, child: Outcome, watch: LineWatch, prompt: str,
            seconds: float, provenance: dict[str, Any]) -> BuiltinOutcome:
    """The Run of the harness that ended as `child` says."""
    ctx = launch.ctx
    read = read_stream(child.stdout, harness.reader(ctx.config), watch.at)
    notes = [f"{harness.prefix}: {note}" for note in launch.notes]
    paths = pattern(roots(ctx.workspace))
    read.entries = _sent(ctx, harness, prompt) + relative(read.entries, paths)
    read.final = relative(read.final, paths)
    left = keep_transcript(ctx.workspace, read.entries)
    if left is not None:
        notes.append(f"{harness.prefix}: the harness left {left} as {transcript.NAME}: "
                     f"removed, never followed, and replaced by smevals' transcript")
    notes += [f"{harness.prefix}: the harness said: {note}" for note in read.notes]
    done = _outcome(harness, ctx, child, read, notes, seconds)
    if launch.own_sandbox:
        done.usage = {**(done.usage or {}), "harness_sandbox": launch.own_sandbox}
    done.provenance = provenance
    return done


def keep_transcript(workspace: Path, entries: list[transcript.Entry]) -> str | None:
    """Write the transcript as a new file in the workspace, never through what the harness
    left under its name (removed first); what that was, or None."""
    from smevals.files.workspace import open_dir, remove, write_new

    fd = open_dir(workspace)
    try:
        left = remove(fd, transcript.NAME)
        write_new(fd, transcript.NAME, transcript.dump(entries))
    finally:
        os.close(fd)
    return left


def _sent(ctx: BuiltinContext, harness: Harness, prompt: str) -> list[transcript.Entry]:
    """What smevals gave the harness, first in the transcript: the Config's `system`, and
    the prompt (unless the harness's own stream starts with it)."""
    sent: list[transcript.Entry] = []
    system = ctx.config.get("system")
    if isinstance(system, str) and system.strip():
        sent.append({"type": "message", "role": "system", "text": system, "t": 0.0})
    if not harness.echoes_prompt:
        sent.append({"type": "message", "role": "user", "text": prompt, "t": 0.0})
    return sent


def _outcome(harness: Harness, ctx: BuiltinContext, child: Outcome, read: Collector,
             notes: list[str], seconds: float) -> BuiltinOutcome:
    usage = dict(read.usage)
    usage.setdefault("duration_ms", round(seconds * 1000))
    usage["tool_calls"] = usage_calls(read.entries)
    usage["sandbox"] = child.sandbox
    err = _quiet(harness, child.stderr[:STDERR_CAP].decode("utf-8", "replace"))
    stderr = err + ("" if not err or err.endswith("\n") else "\n")
    stderr += "".join(f"{note}\n" for note in notes)
    kind, reason, code = verdict(child, read, ctx)
    if kind is None:
        return BuiltinOutcome(stdout=read.final, stderr=stderr, usage=usage)
    if kind == "exit" and child.exit_code and not read.failure:
        reason += _stderr_tail(err)
    return BuiltinOutcome(stdout=read.final, stderr=f"{stderr}{harness.prefix}: {reason}\n",
                          exit_code=code, usage=usage, failure=kind)


def _quiet(harness: Harness, err: str) -> str:
    """The harness's stderr without the lines it prints on every Run (`Harness.noise`)."""
    if not harness.noise or not err:
        return err
    lines = err.splitlines(keepends=True)
    return "".join(line for line in lines if not line.strip().startswith(harness.noise))


def verdict(child: Outcome, read: Collector, ctx: BuiltinContext) -> tuple[str | None, str, int]:
    """(failure kind or None, reason, exit code) of the Run, first cause first."""
    code = child.exit_code
    if ctx.cancel.is_set():
        return "exit", "cancelled", 130
    if child.error is not None:
        return "launch", child.error, 1
    if child.timed_out:
        return "timeout", f"timed out after {ctx.timeout or DEFAULT_TIMEOUT:g} s", 1
    if child.idle:
        last = f" (its last word: {read.notes[-1]})" if read.notes else ""
        return "timeout", (f"no event from the harness for {idle_timeout(ctx.config):g} s "
                           f"(idle_timeout){last}: it was stopped"), 1
    if child.over_cap:
        return "exit", (f"the harness wrote more than {stream_cap(ctx)} bytes on "
                        f"{' and '.join(child.over_cap)}: it was stopped"), 1
    if read.failure is not None:
        return "exit", f"the harness reported a failure: {read.failure}", code or 1
    if code is not None and code < 0:
        return "signal", f"the harness was killed by {_signal(-code)}", 1
    if code:
        return "exit", f"the harness exited with {code}", code
    if not read.ended:
        return "exit", ("the event stream is truncated: it ended before the harness's last "
                        "event"), 1
    return None, "", 0


def _signal(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _stderr_tail(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()][-SHOWN_STDERR:]
    return f" (its stderr ends: {' | '.join(lines)})" if lines else ""
