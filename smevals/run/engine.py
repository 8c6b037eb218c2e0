"""Run jobs with `-j` workers; Ctrl-C or SIGTERM stops launching and ends every runner."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar, cast

from smevals.phases import phase

J = TypeVar("J")
_WAKE = 0.1     # seconds
R = TypeVar("R")


class Interrupted(Exception):
    """The user stopped the session; `done` holds what finished before."""

    def __init__(self, done: list[object]):
        self.done = done
        super().__init__("interrupted")


def run_pool(items: Iterable[J], work: Callable[[J], R | Future[R] | None], workers: int,
             on_done: Callable[[R], None], on_cancel: Callable[[], None]) -> list[R]:
    """Apply `work` to every item with `workers` threads, in submission order of launch.

    Results reach `on_done` in the calling thread as they finish. `work` may give a Future
    instead (a Run still being placed in the store, store/batch.py): its worker takes the
    next item at once, and the result reaches `on_done` when the future is done. A
    KeyboardInterrupt stops launching, calls `on_cancel` (which ends running processes),
    waits for the results being placed and raises Interrupted.
    """
    done: list[R] = []
    pending: set[Future[Any]] = set()       # jobs in the pool
    later: set[Future[Any]] = set()         # their results, still being placed
    queue = iter(items)
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        _fill(pool, queue, work, pending, workers)
        while pending or later:
            # a timeout, so that the main thread runs a signal handler within it even when
            # the kernel gave the signal to a worker thread (a plain wait would sleep on)
            finished, _ = wait(pending | later, timeout=_WAKE, return_when=FIRST_COMPLETED)
            for future in finished:
                result = _settled(future, pending, later)
                if result is not None:
                    done.append(result)
                    with phase("report a result"):
                        on_done(result)
            _fill(pool, queue, work, pending, workers)
    except KeyboardInterrupt:
        on_cancel()
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        for future in pending:
            if future.done() and not future.cancelled() and future.exception() is None:
                result = future.result()
                if isinstance(result, Future):
                    later.add(result)
                elif result is not None:
                    done.append(result)
        wait(later)                 # what finished is kept: placed before the exit
        done.extend(f.result() for f in later if f.exception() is None)
        raise Interrupted(list(done)) from None
    except BaseException:               # a failing job (a full disk): stop the others too
        on_cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return done


def _settled(future: Future[Any], pending: set[Future[Any]], later: set[Future[Any]]
             ) -> R | None:
    """The result of a finished future, None while it is still a result being placed (then
    waited for in `later`)."""
    pending.discard(future)
    later.discard(future)
    result = future.result()
    if isinstance(result, Future):
        later.add(result)
        return None
    return cast(R | None, result)


def _fill(pool: ThreadPoolExecutor, queue: Iterable[J],
          work: Callable[[J], R | Future[R] | None],
          pending: set[Future[Any]], workers: int) -> None:
    """Keep at most `workers` jobs in flight, so nothing launches after an interrupt."""
    iterator = iter(queue)
    while len(pending) < max(1, workers):
        try:
            item = next(iterator)
        except StopIteration:
            return
        pending.add(pool.submit(work, item))
