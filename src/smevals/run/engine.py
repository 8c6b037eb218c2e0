"""Run jobs with `-j` workers; Ctrl-C or SIGTERM stops launching and ends every runner.

Each worker thread takes the next item itself and hands its result to the calling thread
through one queue, so the calling thread (which reports each result, and holds the
interpreter's lock while it does) only ever waits on that queue: no future per job to
create, wait on and tear down.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from smevals.phases import phase
from smevals.proc.signals import deferred

J = TypeVar("J")
_WAKE = 0.1     # seconds
R = TypeVar("R")


class Interrupted(Exception):
    """The user stopped the session; `done` holds what finished before."""

    def __init__(self, done: list[object]):
        self.done = done
        super().__init__("interrupted")


_FAILED, _RESULT, _LATER, _EXIT = range(4)


class _Pool(Generic[J, R]):
    """The worker threads, the items they take and the queue of what they give back."""

    def __init__(self, items: Iterable[J], work: Callable[[J], R | Future[R] | None]):
        self.items: Iterator[J] = iter(items)
        self.work = work
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.results: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        self.later = 0                      # results still being placed

    def next_item(self) -> tuple[bool, J | None]:
        with self.lock:
            if self.stop.is_set():
                return False, None
            try:
                return True, next(self.items)
            except StopIteration:
                return False, None
            except BaseException as exc:    # making the item failed: stop, say why
                self.stop.set()
                self.results.put((_FAILED, exc))
                return False, None

    def run(self) -> None:
        try:
            while True:
                more, item = self.next_item()
                if not more:
                    return
                try:
                    result = self.work(item)    # type: ignore[arg-type]
                except BaseException as exc:
                    self.stop.set()
                    self.results.put((_FAILED, exc))
                    return
                if isinstance(result, Future):
                    with self.lock:
                        self.later += 1
                    result.add_done_callback(self._placed)
                elif result is not None:
                    self.results.put((_RESULT, result))
        finally:
            self.results.put((_EXIT, None))

    def _placed(self, future: Future[R]) -> None:
        self.results.put((_LATER, future))

    def settled(self, future: Future[R]) -> R:
        """The result of a placed future (its error raised), counted off `later`."""
        with self.lock:
            self.later -= 1
        return future.result()


def run_pool(items: Iterable[J], work: Callable[[J], R | Future[R] | None], workers: int,
             on_done: Callable[[R], None], on_cancel: Callable[[], None]) -> list[R]:
    """Apply `work` to every item with `workers` threads, each taking the next item when it
    is free. Results reach `on_done` in the calling thread as they finish. `work` may give
    a Future instead (a Run still being placed in the store, store/batch.py): its worker
    takes the next item at once, and the result reaches `on_done` when the future is done.
    A KeyboardInterrupt stops launching, calls `on_cancel` (which ends running processes),
    waits for the results being placed and raises Interrupted."""
    pool: _Pool[J, R] = _Pool(items, work)
    threads = [threading.Thread(target=pool.run, daemon=True, name=f"smevals-job-{i}")
               for i in range(max(1, workers))]
    done: list[R] = []
    try:
        with deferred():    # an interrupt while they start is raised once all have started,
            for thread in threads:          # so that every one is waited for below
                thread.start()
        _collect(pool, len(threads), done, on_done)
    except KeyboardInterrupt:
        on_cancel()
        pool.stop.set()
        _drain(pool, threads, done)
        raise Interrupted(list(done)) from None
    except BaseException:               # a failing job (a full disk): stop the others too
        on_cancel()
        pool.stop.set()
        _drain(pool, threads, [])
        raise
    return done


def _collect(pool: _Pool[J, R], running: int, done: list[R],
             on_done: Callable[[R], None]) -> None:
    """Report each result until every worker has ended and every result is placed."""
    while running or pool.later:
        # a timeout, so that the main thread runs a signal handler within it even when
        # the kernel gave the signal to a worker thread (a plain get would sleep on)
        try:
            kind, value = pool.results.get(timeout=_WAKE)
        except queue.Empty:
            continue
        if kind == _EXIT:
            running -= 1
        elif kind == _FAILED:
            raise value
        else:
            result = pool.settled(value) if kind == _LATER else value
            done.append(result)
            with phase("report a result"):
                on_done(result)


def _drain(pool: _Pool[J, R], threads: list[threading.Thread], done: list[R]) -> None:
    """After a stop: wait for the jobs under way and the results being placed, keeping
    what they finished in `done` (not reported)."""
    for thread in threads:
        if thread.ident is not None:    # not one that could not start (no thread left)
            thread.join()
    while True:
        with pool.lock:
            if not pool.later and pool.results.empty():
                return
        kind, value = pool.results.get()
        if kind == _RESULT:
            done.append(value)
        elif kind == _LATER and value.exception() is None:
            done.append(pool.settled(value))
        elif kind == _LATER:
            with pool.lock:
                pool.later -= 1
