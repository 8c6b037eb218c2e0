"""Progress for long work: a bar on a terminal, one line per finished item otherwise."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:

    from smevals.grade.apply import GradeResult


class Progress:
    def __init__(self, label: str, stream_is_tty: bool | None = None):
        self.label = label
        self.tty = sys.stderr.isatty() if stream_is_tty is None else stream_is_tty
        self.total = 0
        self.counts = {"done": 0, "ok": 0, "failed": 0}
        self.start_time = time.monotonic()

    def start(self, total: int) -> None:
        self.total = total
        self.counts = {"done": 0, "ok": 0, "failed": 0}
        self.start_time = time.monotonic()
        self._draw()

    def step(self, ok: bool, line: str, explain: bool = False) -> None:
        """Count one finished item. Off a terminal print its line; on one, print only the
        line of a failed item (or one to `explain`) above the bar."""
        self.counts["done"] += 1
        self.counts["ok" if ok else "failed"] += 1
        if not self.tty:
            click.echo(line)
            return
        if explain or not ok:
            click.echo("\r\x1b[K", nl=False, err=True)
            click.echo(line)
        self._draw()

    def close(self) -> None:
        if self.tty and self.total:
            click.echo("", err=True)

    def _draw(self) -> None:
        if not self.tty or not self.total:
            return
        done, total = self.counts["done"], self.total
        width = 28
        filled = int(width * done / total)
        elapsed = time.monotonic() - self.start_time
        eta = elapsed / done * (total - done) if done else 0.0
        bar = "#" * filled + "-" * (width - filled)
        text = (f"\r{self.label} [{bar}] {done}/{total}  ok {self.counts['ok']}  "
                f"failed {self.counts['failed']}  ETA {_clock(eta)}")
        click.echo(text, nl=False, err=True)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C while long work runs, so both stop it the same way (the
    `smevals` command does so from its start: smevals/proc/signals.py)."""
    from smevals.proc.signals import stop

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def score_shown(result: GradeResult) -> str:
    """` score=0.6` beside a Grade's outcome; a failed Grade's score above 0 with the reason
    (docs/reports.md#scores-that-not-every-grade-has); `` without a score."""
    from smevals.grade.score import score_text

    shown = score_text({**result.record, "score": result.score}, "{:.3g}", reasoned=True)
    return f" score={shown}" if shown else ""


def tampering_shown(result: GradeResult) -> str:
    """`\n    tampering: conftest.py (conftest), ...` under a Grade that marks any (its first
    five marks); `` without."""
    marks = result.record.get("tampering") or []
    if not marks:
        return ""
    more = f", and {len(marks) - 5} more" if len(marks) > 5 else ""
    return "\n    tampering: " + ", ".join(f"{m['path']} ({m['kind']})" for m in marks[:5]) + more
