"""Placing sealed objects from a thread of their own, in batches: one fsync pass for every
object waiting, then each renamed into place in the order it came.

`run` hands each Run (with its Grade, under `run -g`) to a Committer as soon as it is
sealed, and starts the next runner while the Committer makes the last objects durable. A
batch is everything waiting when the Committer is free: every file and folder of every
object in it is fsynced at once (store.durable), and only then is any of them renamed into
place, so each object is still on disk before its rename (docs/reliability.md). The
objects handed in together (a Run and its Grade) are placed in that order, the Grade
never without its Run. The caller learns the outcome through the future `submit` gives:
what was placed, or the error (a full disk) after what was not placed is thrown away.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

from smevals.files.durable import fsync_paths
from smevals.phases import phase
from smevals.store.write import Sealed, Written, paths_of, place_all

MAX_BATCH = 64              # groups of objects placed after one fsync pass


class Committer:
    """Places the groups of sealed objects it is given, in batches, from its own thread."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: list[tuple[list[Sealed], Future[list[Written]]]] = []
        self._closing = False
        self._thread: threading.Thread | None = None

    def submit(self, objects: list[Sealed]) -> Future[list[Written]]:
        """Place `objects`, in that order, with the next batch; the future gives what was
        placed (store.write.Written, in order) or raises why not."""
        future: Future[list[Written]] = Future()
        with self._cond:
            if self._closing:
                raise RuntimeError("the committer is closed")
            self._queue.append((objects, future))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name="smevals-commit")
                self._thread.start()
            self._cond.notify()
        return future

    def close(self) -> None:
        """Wait until everything submitted is placed (or has failed)."""
        with self._cond:
            self._closing = True
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            place_batch(batch)


def place_batch(batch: list[tuple[list[Sealed], Future[list[Written]]]]) -> None:
    """fsync every object of the batch at once, then place each group in order."""
    try:
        with phase("fsync"):
            fsync_paths(paths_of([one for objects, _future in batch for one in objects]))
    except BaseException as exc:            # nothing of the batch is placed
        for objects, future in batch:
            for one in objects:
                one.abort()
            future.set_exception(exc)
        return
    for objects, future in batch:
        try:
            future.set_result(place_all(objects, synced=True))
        except BaseException as exc:
            future.set_exception(exc)
