"""A Run (and under `run -g` its Grade) made, then placed in the store while the next
runner starts.

The worker seals the Run (store.write.Staging.seal). Under `run -g` the Run is graded right
away, before it is placed: from the private copy made as it was sealed (the very bytes
hashed into its record, so nothing can change what is graded after the hash), and with no
claim, since no other process can see a Run that is not placed yet. The Run and its Grade
then go to the Committer (store/batch.py), which makes them durable with the other
objects waiting (one fsync pass) and renames the Run into place, then its Grade. The worker
is free as soon as it has handed them over; the result is a future, done when both are
placed.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, NamedTuple, Protocol

from smevals.run.attempt import Attempt, Session, attempt_sealed
from smevals.run.plan import Job
from smevals.store.batch import Committer
from smevals.store.write import Sealed, Written


class Graded(Protocol):
    """A Grade made by `run -g` (grade.apply.GradeResult), sealed and not placed yet."""

    @property
    def sealed(self) -> Sealed | None: ...

    @property
    def outcome(self) -> str: ...


class Made(NamedTuple):
    """A Run just made and placed, and its Grade under `run -g`."""

    run: Attempt
    grade: Any                      # grade.apply.GradeResult | None

    @property
    def ok(self) -> bool:
        return self.run.ok


def made_later(session: Session, job: Job, committer: Committer,
               grade: Callable[[Attempt], Graded | None] | None) -> Future[Made] | None:
    """Attempt `job`, grade the Run with `grade` when it is ok, and hand both to `committer`:
    a future of both once placed; None when the session was cancelled meanwhile."""
    made = attempt_sealed(session, job, keep=grade is not None)
    if made is None or made.sealed is None:
        return None
    try:
        graded = grade(made) if grade is not None and made.ok else None
    except BaseException:           # the Run is kept, as when it was placed before grading
        with contextlib.suppress(Exception):
            committer.submit([made.sealed]).result()
        raise
    finally:
        if made.copy is not None:
            shutil.rmtree(made.copy, ignore_errors=True)
    objects = [made.sealed] + ([graded.sealed] if graded is not None and graded.sealed else [])
    out: Future[Made] = Future()

    def placed(future: Future[list[Written]]) -> None:
        try:
            written = future.result()
        except BaseException as exc:
            out.set_exception(exc)
            return
        out.set_result(Made(made.placed(written[0]), _unsealed(graded)))

    committer.submit(objects).add_done_callback(placed)
    return out


def _unsealed(graded: Any) -> Any:
    """The Grade without its staging handle, now that it is placed."""
    if graded is None or getattr(graded, "sealed", None) is None:
        return graded
    import dataclasses

    return dataclasses.replace(graded, sealed=None)
