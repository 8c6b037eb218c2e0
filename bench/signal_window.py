"""Signal window under load: SIGTERM/SIGINT `smevals run -j 4 -g` at the moment the signal
tests call "grade" (a checker has started and left a detached `setsid` sleeper), with the
cores stressed, hundreds of times, and tell apart what each survivor was.

Each trial is the test's (tests/test_signals.py): four Tasks (--tasks), `-j 4`, a runner
and a checker that each start a detached sleeper (`setsid sh -c 'exec sleep 45'`;
--sleepers of them); the checker then sleeps. The signal goes out a random moment
(0 .. --jitter s) after the first checker's marker. The bench makes itself a child
subreaper, so what smevals leaves behind (its guardian, any survivor) is re-parented here
and its end can be timed. For every trial it records, from smevals' exit: the tagged
processes still alive; when each vanished; when the guardian ended. A survivor is then

- "dying": a SIGKILL was already pending on it when smevals had exited (smevals killed
  it; the kernel had not yet let it die: a slow death, not a missed window);
- "guardian": no kill pending, and it vanished before the guardian ended (the guardian
  killed it: slow, not missed);
- "missed": no kill pending, and it outlived the guardian, or --linger seconds (nobody was
  going to kill it).

`--direct N` then starts, N times (four at once, as `run -j 4`), a child through
smevals.proc (`run_child`, in this process) that starts --sleepers detached sleepers and
sleeps, with a deadline at a random moment within --jitter s, so its tree is killed while
they start (each execs three times): the grade trials' moment, without the rest of `run`,
many times a minute. It counts the children that left a tagged process alive once
`run_child` had returned, and of those, the ones with no kill pending (missed).

`--reads N` last measures the window itself: N times, a process goes through the exec
chain of a detached sleeper (`exec setsid sh -c 'exec sleep 49'`) while this process asks
smevals.proc whether it carries its tree's tag, as a tree's kill does, again and again until
it sleeps; it counts the answers "no" (the tag missed).

`--stress N` runs N busy loops (one per core is a heavy load) while the trials run, and
`--io N` N writers that write and fsync 8 MiB files in a loop (processes then wait on the
disk).
Every figure is printed; the exit code is 1 when a survivor or an exit other than 130 was
seen.

Usage: python bench/signal_window.py [--trials 200] [--direct 0] [--stress 2] [--io 0] [--tasks 4]
                                     [--sleepers 1] [--jitter 0.3] [--signal TERM|INT|both]
                                     [--linger 15] [--seed 1] [--quiet]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import SMEVALS, write  # noqa: E402
from tools.processes import tagged  # noqa: E402

SLEEPER = "setsid sh -c 'exec sleep {secs}.{tag}' </dev/null >/dev/null 2>&1 &\n"
RUNNER = "#!/bin/sh\n{sleepers}echo answer\n"
CHECKER = """#!/bin/sh
{sleepers}touch "$SMEVALS_EVAL_DIR/checker.$$"
exec sleep 31.{tag}
"""
# a busy loop that ends once this bench is gone (it checks its parent now and then)
BUSY = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    sum(range(100000))\n"
WRITER = """import os, sys
parent, path = os.getppid(), sys.argv[1]
block = os.urandom(1 << 20)
while os.getppid() == parent:
    with open(path, "wb") as out:
        for _ in range(8):
            out.write(block)
        out.flush()
        os.fsync(out.fileno())
    os.unlink(path)
"""
SIGKILL_BIT = 1 << (signal.SIGKILL - 1)


@dataclass
class Outcome:
    code: int | None
    exit_seconds: float                 # from the signal to smevals' exit
    at_exit: int = 0                    # tagged processes alive when smevals had exited
    guardian: float | None = None       # the guardian's end, s after smevals' exit
    lives: list[float | None] = field(default_factory=list)   # each survivor's end (None: never)
    states: list[str] = field(default_factory=list)   # each survivor's state at exit
    dying: int = 0
    missed: int = 0
    by_guardian: int = 0


def subreaper() -> None:
    from smevals.proc.limits import prctl

    fn = prctl()
    if fn is None or fn(36, 1, 0, 0, 0) != 0:           # PR_SET_CHILD_SUBREAPER
        raise SystemExit("this bench needs Linux's PR_SET_CHILD_SUBREAPER")


def my_children() -> set[int]:
    out: set[int] = set()
    for tid in os.listdir(f"/proc/{os.getpid()}/task"):
        try:
            data = Path(f"/proc/{os.getpid()}/task/{tid}/children").read_text()
        except OSError:
            continue
        out.update(int(x) for x in data.split())
    return out


def is_guardian(pid: int) -> bool:
    try:
        return b"smevals.proc.guardian" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def kill_pending(pid: int) -> tuple[bool, str]:
    """Whether a SIGKILL is pending on `pid` (sent, not yet acted on), and what it is: its
    state, command line, parent, group, session and whether its environment holds a tree
    tag (`_SMEVALS_TREE`)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False, "gone"
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    pending = any(int(fields.get(k, "0").strip() or "0", 16) & SIGKILL_BIT
                  for k in ("SigPnd", "ShdPnd"))
    state = fields.get("State", "?").strip().split(" ")[0]
    tagged_env = b"_SMEVALS_TREE=" in environ
    return pending, (f"{state}, `{cmdline.strip()}`, parent {stat[1]}, group {stat[2]}, "
                     f"session {stat[3]}, {'tag in env' if tagged_env else 'NO tag in env'}")


def reap(pids: set[int]) -> set[int]:
    """Reap those of `pids` that ended; the ones still running."""
    alive = set()
    for pid in pids:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                alive.add(pid)
        except ChildProcessError:
            pass
    return alive


def make(root: Path, tag: str, tasks: int, sleepers: int) -> Path:
    write(root / "eval.yaml", "name: window\n")
    for i in range(tasks):
        write(root / "tasks" / f"t{i}.yaml", "prompt: p\n")
    write(root / "configs" / "default.yaml", "runner: ./r.sh\nmodel: m1\n")
    write(root / "configs" / "r.sh", RUNNER.format(
        sleepers=SLEEPER.format(secs=45, tag=tag) * sleepers), executable=True)
    write(root / "graders" / "default.yaml", "checks:\n  - checker: ./c.sh\n")
    write(root / "graders" / "c.sh", CHECKER.format(
        sleepers=SLEEPER.format(secs=46, tag=tag) * sleepers, tag=tag), executable=True)
    return root


def trial(root: Path, n: int, delay: float, sig: int, args: argparse.Namespace,
          keep: set[int]) -> Outcome:
    tag = f"{os.getpid() % 1000}{n:04d}"
    ev = make(root / f"ev{n}", tag, args.tasks, args.sleepers)
    proc = subprocess.Popen([SMEVALS, "run", str(ev), "-j", "4", "-g", "default"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    keep.add(proc.pid)
    end = time.monotonic() + 60
    while not any(p.name.startswith("checker.") for p in ev.iterdir()):
        if proc.poll() is not None or time.monotonic() > end:
            break
        time.sleep(0.002)
    time.sleep(delay)
    sent = time.monotonic()
    proc.send_signal(sig)
    code = proc.wait(timeout=60)
    gone = time.monotonic()
    keep.discard(proc.pid)
    out = Outcome(code, gone - sent)
    left = tagged(tag)
    pending = [kill_pending(pid) for pid in left]
    out.at_exit = len(left)
    out.states = [f"{state}{' +KILL' if killed else ''}" for killed, state in pending]
    out.lives = watch(tag, left, gone, args.linger, keep, out)
    for (killed, _state), end_at in zip(pending, out.lives, strict=True):
        if killed:
            out.dying += 1
        elif end_at is None or out.guardian is None or end_at > out.guardian + 0.05:
            out.missed += 1
        else:
            out.by_guardian += 1
    return out


def watch(tag: str, left: list[int], gone: float, linger: float, keep: set[int],
          out: Outcome) -> list[float | None]:
    """When each of `left` vanished, and (in `out`) when the guardian ended, in seconds
    after smevals' exit at `gone`; then kill what is left."""
    helpers = {pid for pid in my_children() - keep if is_guardian(pid)}
    lives: dict[int, float | None] = dict.fromkeys(left)
    while (helpers or None in lives.values()) and time.monotonic() - gone < linger:
        now = time.monotonic() - gone
        helpers = reap(helpers)
        if not helpers and out.guardian is None:
            out.guardian = now
        alive = set(tagged(tag))
        lives.update({pid: now for pid, end in lives.items() if end is None and pid not in alive})
        reap(my_children() - keep)
        time.sleep(0.01)
    if out.guardian is None and not helpers:
        out.guardian = time.monotonic() - gone
    for pid in tagged(tag):
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.05)
    reap(my_children() - keep)
    return list(lives.values())


def direct(n: int, sleepers: int, jitter: float, folder: Path, keep: set[int]) -> None:
    """`run_child` of a child that leaves `sleepers` detached sleepers and exits, `n` times,
    four at once (as `run -j 4`: a tree is then told from the others by its tag alone);
    what each tree's kill left alive."""
    if not n:
        return
    from concurrent.futures import ThreadPoolExecutor

    from smevals.proc import tree

    tree.become_subreaper()
    start = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda i: one_child(i, sleepers, jitter, folder), range(n)))
    reap(my_children() - keep)
    left = sum(1 for states in found if states)
    missed = sum(not killed for states in found for killed, _state in states)
    print(f"direct: {n} children, 4 at once, {sleepers} sleeper(s) each, in "
          f"{time.monotonic() - start:.0f} s (load {os.getloadavg()[0]:.1f}): {left} left a "
          f"tagged process alive, {missed} process(es) with no kill pending (missed)")


def one_child(i: int, sleepers: int, jitter: float, folder: Path) -> list[tuple[bool, str]]:
    from smevals.proc import Spec, run_child

    tag = f"{os.getpid() % 1000}9{i:05d}"
    script = SLEEPER.format(secs=48, tag=tag) * sleepers + f"exec sleep 30.{tag}\n"
    deadline = 0.01 + random.Random(i).uniform(0, jitter)
    run_child(Spec(["sh", "-c", script], folder, dict(os.environ), timeout=deadline))
    alive = tagged(tag)
    states = [kill_pending(pid) for pid in alive]
    if alive:
        print(f"direct {i}: {len(alive)} left: " + "; ".join(
            f"{state}{' +KILL' if killed else ''}" for killed, state in states), flush=True)
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    return states


def reads(n: int) -> None:
    """Whether smevals.proc finds the tag of a process all along its exec chain, `n` times."""
    if not n:
        return
    from smevals.proc import tree

    asked = missed = chains = 0
    for i in range(n):
        before = missed
        tag = f"{os.getpid() % 1000}8{i:05d}"
        proc = subprocess.Popen(["sh", "-c", f"exec setsid sh -c 'exec sleep 49.{tag}'"],
                                env={**os.environ, tree.TAG_VAR: tag})
        cmdline = b""
        try:
            while b"sleep" not in cmdline:
                cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
                asked += 1
                missed += not tree._tagged(proc.pid, tag)
        finally:
            proc.kill()
            proc.wait()
        chains += missed > before
    print(f"reads: {n} exec chains, the tag asked {asked} times while they exec'd: missed "
          f"{missed} times ({100 * missed / max(1, asked):.2f}%), in {chains} of the chains")


def describe(n: int, sig: signal.Signals, delay: float, o: Outcome) -> str:
    text = (f"trial {n}: {sig.name} {delay * 1000:.0f} ms after the first checker: exit "
            f"{o.code} in {o.exit_seconds:.2f} s")
    if o.at_exit:
        lives = ", ".join(("never" if t is None else f"{t:.2f} s") + f" ({s})"
                          for t, s in zip(o.lives, o.states, strict=True))
        guardian = "still running" if o.guardian is None else f"{o.guardian:.2f} s"
        text += (f"; {o.at_exit} left at exit, gone after (state at exit): {lives}; guardian "
                 f"ended after {guardian}")
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--direct", type=int, default=0, help="children run in this process, "
                    "each leaving sleepers, killed at a random deadline")
    ap.add_argument("--reads", type=int, default=0, help="exec chains whose tag is read "
                    "while they exec")
    ap.add_argument("--stress", type=int, default=2, help="busy loops running meanwhile")
    ap.add_argument("--io", type=int, default=0, help="fsync writers running meanwhile")
    ap.add_argument("--tasks", type=int, default=4, help="Tasks of the Eval (run -j 4)")
    ap.add_argument("--sleepers", type=int, default=1, help="detached sleepers each runner "
                    "and checker starts (more: more chances to hit the window per trial)")
    ap.add_argument("--jitter", type=float, default=0.3, help="latest moment after the "
                    "first checker's marker, in seconds")
    ap.add_argument("--signal", choices=("TERM", "INT", "both"), default="both")
    ap.add_argument("--linger", type=float, default=15.0, help="how long a survivor is "
                    "watched after smevals' exit")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quiet", action="store_true", help="print only trials with survivors")
    args = ap.parse_args()
    subreaper()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))      # (`timeout`): summary, clean up
    rng = random.Random(args.seed)
    sigs = [signal.SIGTERM, signal.SIGINT] if args.signal == "both" else \
        [signal.Signals[f"SIG{args.signal}"]]
    scratch = tempfile.mkdtemp(dir=os.environ.get("BENCH_DIR"))
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.stress)]
    busy += [subprocess.Popen([sys.executable, "-c", WRITER, f"{scratch}/w{i}"])
             for i in range(args.io)]
    keep = {p.pid for p in busy}
    codes: collections.Counter[int | None] = collections.Counter()
    outcomes: list[Outcome] = []
    start = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
            for n in range(args.trials):
                delay, sig = rng.uniform(0, args.jitter), sigs[n % len(sigs)]
                o = trial(Path(tmp), n, delay, sig, args, keep)
                outcomes.append(o)
                codes[o.code] += 1
                if o.at_exit or not args.quiet or o.code != 130:
                    print(describe(n, sig, delay, o), flush=True)
            direct(args.direct, args.sleepers, args.jitter, Path(tmp), keep)
            reads(args.reads)
    except (KeyboardInterrupt, SystemExit):
        print("stopped early", flush=True)
    finally:
        for p in busy:
            p.kill()
            p.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    summary(args, outcomes, codes, time.monotonic() - start)
    bad = sum(v for k, v in codes.items() if k != 130)
    return 1 if bad or any(o.at_exit for o in outcomes) else 0


def summary(args: argparse.Namespace, outcomes: list[Outcome],
            codes: collections.Counter[int | None], took: float) -> None:
    left = [o for o in outcomes if o.at_exit]
    exits = [o.exit_seconds for o in outcomes]
    print(f"{len(outcomes)} trials of {args.tasks} Tasks, {args.sleepers} sleeper(s) per "
          f"runner and checker, in {took:.0f} s, {args.stress} busy loop(s), {args.io} fsync "
          f"writer(s), load {os.getloadavg()[0]:.1f}; exit codes {dict(codes)} (must all be "
          "130)")
    if exits:
        print(f"signal to exit: median {statistics.median(exits):.2f} s, max "
              f"{max(exits):.2f} s")
    print(f"trials that left a tagged process at smevals' exit: {len(left)} of "
          f"{len(outcomes)}; survivors killed but not yet dead: "
          f"{sum(o.dying for o in outcomes)}, killed later by the guardian: "
          f"{sum(o.by_guardian for o in outcomes)}, missed (nobody killed them): "
          f"{sum(o.missed for o in outcomes)}")
    ends = [o.guardian for o in outcomes if o.guardian is not None]
    if ends:
        print(f"the guardian ended after smevals' exit: median {statistics.median(ends):.2f} s,"
              f" max {max(ends):.2f} s")


if __name__ == "__main__":
    sys.exit(main())
