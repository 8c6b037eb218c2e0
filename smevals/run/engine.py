"""Run jobs with `-j` workers; Ctrl-C or SIGTERM stops launching and ends every runner."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

J = TypeVar("J")
_WAKE = 0.1     # seconds
R = TypeVar("R")


class Interrupted(Exception):
    """The user stopped the session; `done` holds what finished before."""

    def __init__(self, done: list[object]):
        self.done = done
        super().__init__("interrupted")


def run_pool(items: Iterable[J], work: Callable[[J], R | None], workers: int,
             on_done: Callable[[R], None], on_cancel: Callable[[], None]) -> list[R]:
    """Apply `work` to every item with `workers` threads, in submission order of launch.

    Results reach `on_done` in the calling thread as they finish. A KeyboardInterrupt stops
    launching, calls `on_cancel` (which ends running processes) and raises Interrupted.
    """
    done: list[R] = []
    pending: set[Future[R | None]] = set()
    queue = iter(items)
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        _fill(pool, queue, work, pending, workers)
        while pending:
            # a timeout, so that the main thread runs a signal handler within it even when
            # the kernel gave the signal to a worker thread (a plain wait would sleep on)
            finished, _ = wait(pending, timeout=_WAKE, return_when=FIRST_COMPLETED)
            for future in finished:
                pending.discard(future)
                result = future.result()
                if result is not None:
                    done.append(result)
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
                if result is not None:
                    done.append(result)
        raise Interrupted(list(done)) from None
    except BaseException:               # a failing job (a full disk): stop the others too
        on_cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return done


def _fill(pool: ThreadPoolExecutor, queue: Iterable[J], work: Callable[[J], R | None],
          pending: set[Future[R | None]], workers: int) -> None:
    """Keep at most `workers` jobs in flight, so nothing launches after an interrupt."""
    iterator = iter(queue)
    while len(pending) < max(1, workers):
        try:
            item = next(iterator)
        except StopIteration:
            return
        pending.add(pool.submit(work, item))
