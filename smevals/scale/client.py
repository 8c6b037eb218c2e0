"""The client side: connect to the scheduler, ship the Eval, send each unit of work, and
hand every result back in this process (which alone writes the store)."""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from smevals.errors import SmevalsError
from smevals.run.engine import Interrupted
from smevals.scale import ClusterSpec
from smevals.scale.bundle import Bundle, make_bundle

CONNECT_SECONDS = 20.0          # default; SMEVALS_DASK_TIMEOUT overrides


@contextlib.contextmanager
def connect(spec: ClusterSpec) -> Iterator[Any]:
    """A Dask client of the scheduler at `spec.address`; exit 2 when dask is missing or the
    scheduler cannot be reached."""
    try:
        from distributed import Client
    except ImportError:
        raise SmevalsError("--dask needs the optional extra: pip install 'smevals[dask]'") \
            from None
    logging.getLogger("distributed").setLevel(logging.ERROR)
    try:
        client = Client(spec.address, timeout=_connect_seconds(), set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SmevalsError(f"--dask {spec.address}: cannot reach the Dask scheduler: "
                           f"{exc}") from None
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=5)


def _connect_seconds() -> float:
    text = os.environ.get("SMEVALS_DASK_TIMEOUT", "")
    try:
        return float(text) if text else CONNECT_SECONDS
    except ValueError:
        raise SmevalsError(f"SMEVALS_DASK_TIMEOUT: '{text}' is not a number of seconds") \
            from None


def ship(client: Any, eval_dir: Path, store_root: Path, runner: Any = None) -> tuple[Bundle, Any]:
    """The Eval's bundle, and its contents scattered once under a key made of the bundle's
    content hash (one dependency per task; each worker fetches it the first time a task
    needs it, then keeps it)."""
    bundle, blobs = make_bundle(eval_dir, store_root, runner)
    key = f"smevals-bundle-{bundle.digest}"
    return bundle, client.scatter({key: (bundle, blobs)}, hash=False)[key]


def drive(client: Any, items: list[Any], submit: Callable[[str, Any], Any],
          on_result: Callable[[Any, Any], None]) -> None:
    """Submit every item (`submit(key, item)` returns a future) and pass each result to
    `on_result` here as it arrives. A worker lost mid-task has its task run again
    elsewhere by the scheduler; only the result that arrives counts, so nothing is
    duplicated. Ctrl-C cancels what has not finished and raises Interrupted."""
    from distributed import as_completed

    batch = uuid.uuid4().hex[:12]
    futures = {submit(f"smevals-{batch}-{n}", item): item for n, item in enumerate(items)}
    try:
        for future in as_completed(list(futures), loop=client.loop):
            on_result(futures[future], _result(future))
    except KeyboardInterrupt:
        client.cancel(list(futures))
        raise Interrupted([]) from None


def _result(future: Any) -> Any:
    from distributed.scheduler import KilledWorker

    try:
        return future.result()
    except KilledWorker as exc:
        raise SmevalsError(f"Dask workers died running {future.key} again and again ({exc}); "
                           "see the workers' logs") from None
