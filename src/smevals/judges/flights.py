"""Identical judge requests of one `grade` are asked once.

Two Checks (two samples with the same output, two graders sharing a Check, the Runs of a
`-j 4` pool) can build the very same request. The first to ask it sends it; any other that
asks while it is in flight waits and gets the same answer, and any that asks later gets it
too: the answer, once it parsed as a verdict and went into the judge cache, is read back from
there (so memory stays small), else it is kept here. A call that failed (after the backend's
retries) is shared the same way: every identical request of the same `grade` gets that
error, and the next `grade` tries them all again. The replay backend is left out (its answer
depends on more than the request).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from smevals.judges.backends import Answer, CallError

_LANDED = threading.Event()
_LANDED.set()


@dataclass
class Flight:
    """One request's call: in flight until `done` is set."""

    done: threading.Event = field(default_factory=threading.Event)
    answer: Answer | None = None
    error: CallError | None = None
    stored: bool = False            # the answer is in the judge cache (and no longer here)


class Asked:
    """The requests asked in one `grade` (or `run -g`), by request key."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.flights: dict[str, Flight] = {}

    def claim(self, key: str) -> tuple[Flight, bool]:
        """(the request's flight, whether the caller is the first and must ask)."""
        with self.lock:
            found = self.flights.get(key)
            if found is not None:
                return found, False
            flight = self.flights[key] = Flight()
            return flight, True

    def settle(self, flight: Flight, answer: Answer | None, error: CallError | None) -> None:
        with self.lock:
            flight.answer, flight.error = answer, error
        event, flight.done = flight.done, _LANDED       # one shared Event for every landed one
        event.set()

    def stored(self, key: str) -> None:
        """The answer of `key` is now in the judge cache: later askers read it there."""
        with self.lock:
            flight = self.flights.get(key)
            if flight is not None and flight.answer is not None:
                flight.answer, flight.stored = None, True

    def outcome(self, flight: Flight, cancel: threading.Event | None
                ) -> tuple[Answer | None, CallError | None, bool] | None:
        """(answer, error, stored) of a flight once it landed; None when cancelled first."""
        while not flight.done.wait(0.1):
            if cancel is not None and cancel.is_set():
                return None
        with self.lock:
            return flight.answer, flight.error, flight.stored
