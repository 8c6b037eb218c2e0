"""The client side: connect to the scheduler, ship the Eval, send each unit of work, and
hand every result back in this process (which alone writes the store)."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import queue
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from smevals.errors import SmevalsError
from smevals.run.engine import Interrupted
from smevals.scale import ClusterSpec
from smevals.scale.bundle import Bundle, make_bundle

if TYPE_CHECKING:
    from smevals.run.plan import Runner
    from smevals.scale.worker import Made

CONNECT_SECONDS = 20.0          # default; SMEVALS_DASK_TIMEOUT overrides

Item = TypeVar("Item")          # a unit of work sent to a worker (a Job, a Run)
Result = TypeVar("Result")      # what writing its result gives the caller


@contextlib.contextmanager
def connect(spec: ClusterSpec) -> Iterator[Any]:
    """A Dask client of the scheduler at `spec.address`; exit 2 when dask is missing or the
    scheduler cannot be reached."""
    try:
        from distributed import Client
    except ImportError:
        raise SmevalsError("--dask needs the optional `dask` extra: pip install "
                           "'dask[distributed]>=2024.1' where smevals is installed") from None
    logging.getLogger("distributed").setLevel(logging.ERROR)
    try:
        client = Client(  # type: ignore[no-untyped-call]   # distributed has no annotations
            spec.address, timeout=_connect_seconds(), set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SmevalsError(f"--dask {spec.address}: cannot reach the Dask scheduler: "
                           f"{exc}") from None
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=5)  # type: ignore[no-untyped-call]


def _connect_seconds() -> float:
    text = os.environ.get("SMEVALS_DASK_TIMEOUT", "")
    try:
        seconds = float(text) if text else CONNECT_SECONDS
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds):          # `nan` would mean no timeout at all
        raise SmevalsError(f"SMEVALS_DASK_TIMEOUT: '{text}' is not a number of seconds")
    return seconds


def ship(client: Any, eval_dir: Path, store_root: Path,
         runner: Runner | None = None) -> tuple[Bundle, Any]:
    """The Eval's bundle, and its contents scattered once under a key made of the bundle's
    content hash (one dependency per task; each worker fetches it the first time a task
    needs it, then keeps it)."""
    bundle, blobs = make_bundle(eval_dir, store_root, runner)
    key = f"smevals-bundle-{bundle.digest}"
    return bundle, client.scatter({key: (bundle, blobs)}, hash=False)[key]


WRITERS = 4          # objects written at once as they arrive (fsync latency overlaps)


def drive(client: Any, items: Iterable[Item], submit: Callable[[str, Item], Any],
          write: Callable[[Item, Made], Result | None],
          on_done: Callable[[Result], None]) -> None:
    """Submit every item (`submit(key, item)` returns a future); write each result as it
    arrives (`write(item, result)`, a few at once) and pass what that returns to `on_done`
    in this thread. A worker lost mid-task has its task run again elsewhere by the
    scheduler; only the result that arrives counts, so nothing is duplicated. Ctrl-C
    cancels what has not finished, lets the writes under way end, and raises Interrupted."""
    events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    batch = uuid.uuid4().hex[:12]
    futures = {}
    handles = []                # held, else the scheduler forgets the task
    for n, item in enumerate(items):
        future = submit(f"smevals-{batch}-{n}", item)
        futures[future.key] = item
        handles.append(future)
        future.add_done_callback(lambda f: events.put(("arrived", f)))
    left = len(futures)
    writes: set[Future[Result | None]] = set()
    with ThreadPoolExecutor(WRITERS) as pool:
        try:
            while left:
                kind, done = events.get()
                if kind == "arrived":
                    one = pool.submit(write, futures[done.key], _result(done))
                    writes.add(one)
                    one.add_done_callback(lambda f: events.put(("written", f)))
                else:
                    left -= 1
                    writes.discard(done)
                    _hand_on(done, on_done)
        except KeyboardInterrupt:
            client.cancel(handles)
            for one in wait(writes).done:
                _hand_on(one, on_done)
            raise Interrupted([]) from None


def _hand_on(write: Future[Result | None], on_done: Callable[[Result], None]) -> None:
    value = write.result()
    if value is not None:
        on_done(value)


def _result(future: Any) -> Made:
    from distributed.scheduler import KilledWorker

    try:
        made: Made = future.result()
        return made
    except KilledWorker as exc:
        raise SmevalsError(f"Dask workers died running {future.key} again and again ({exc}); "
                           "see the workers' logs") from None
