"""A signal's KeyboardInterrupt can reach the top wrapped by the code it hit: a SIGTERM
that lands in a class body's `__set_name__` (as one did while a module was imported at
start-up) comes out as a RuntimeError. It is still the interrupt: "Interrupted.", exit 130,
no traceback; the same exception without a signal is still a bug."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import os, signal, sys
import smevals.cli
from smevals import __main__ as entry

class Named:
    def __set_name__(self, owner, name):
        if {signal}:
            os.kill(os.getpid(), signal.SIGTERM)
        raise ValueError("a bug in __set_name__")

def {where}():
    class Holder:
        field = Named()

{patch}
entry.main()
"""


def run(where: str, signalled: bool) -> subprocess.CompletedProcess[str]:
    patch = ("smevals.cli.main = start" if where == "start" else
             "import smevals.cli\nreal = smevals.cli.cli.main\n"
             "smevals.cli.cli.main = lambda *a, **k: command()")
    script = SCRIPT.format(signal=signalled, where=where, patch=patch)
    return subprocess.run([sys.executable, "-c", script, "validate"], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("where", ["start", "command"])
def test_a_wrapped_interrupt_is_the_interrupt(where: str) -> None:
    done = run(where, signalled=True)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "Interrupted.\n")


def test_the_same_exception_without_a_signal_is_still_a_bug() -> None:
    start = run("start", signalled=False)
    assert start.returncode == 1                     # Python's own traceback, as for any bug
    assert "ValueError: a bug in __set_name__" in start.stderr
    assert "Interrupted." not in start.stderr
    command = run("command", signalled=False)
    assert (command.returncode, command.stdout) == (3, "")
    assert command.stderr.startswith("Internal error: ")
    assert "This is a bug in smevals." in command.stderr


HIT = """
import os, signal, time
import smevals.cli
from smevals import __main__ as entry

@smevals.cli.cli.command("hit")
def hit():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)

entry.main()
"""


def test_an_interrupt_inside_a_command_that_click_turns_into_abort_is_the_interrupt() -> None:
    """click makes a KeyboardInterrupt raised inside a command an Abort (after a blank
    line); smevals still says "Interrupted." and exits 130, as for any other interrupt."""
    done = subprocess.run([sys.executable, "-c", HIT, "hit"], capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "\nInterrupted.\n")
