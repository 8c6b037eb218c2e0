"""Benchmark validation: the hand-written subset, jsonschema and jsonschema-rs.

Prints, for a Run record, a Grade record and every authoring file of suites/, the time of
one yes/no validation with
  - fastschema: the hand-written subset that smevals used before jsonschema-rs (the module
    store/fastschema.py, read out of git at --before),
  - jsonschema: the pure-Python validator (Draft 2020-12),
  - jsonschema-rs: what smevals.schemas uses now;
then the effect on two commands, each timed in a fresh process against this tree and
against the tree at --before (extracted with git archive):
  - listing and loading every record of a store of --records objects (half Runs, half
    Grades, written as bench/store.py writes them, no fsync) with no index cache, which
    validates every record;
  - `smevals validate` of an Eval of --tasks Tasks.

Usage: python bench/validation.py [--records 100000] [--tasks 2000] [--before 6cb65e6]
                                  [--repeats 3] [--skip-commands]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import store as storebench  # noqa: E402
from bench._common import make_eval  # noqa: E402

LOAD = r"""
import sys, time
from pathlib import Path
start = time.perf_counter()
from smevals.store.read import Store
store = Store(Path(sys.argv[1]))
count = len(store.runs()) + len(store.grades())
print(time.perf_counter() - start, count, len(store.broken))
"""


def fastschema(rev: str) -> Any:
    """store/fastschema.py as it was at `rev`, as a module (None when git cannot say)."""
    proc = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:smevals/store/fastschema.py"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    module = types.ModuleType("fastschema_then")
    exec(compile(proc.stdout, "fastschema.py", "exec"), module.__dict__)  # noqa: S102
    return module


def per_call_us(check: Any, doc: Any, number: int = 2000) -> float:
    best = min(timeit.repeat(lambda: check(doc), number=number, repeat=5))
    return best / number * 1e6


def documents(store_root: Path) -> list[tuple[str, str, Any]]:
    """(label, kind, document): one Run and one Grade record, then the suites' files."""
    import orjson
    import yaml

    run = next(store_root.glob("runs/**/run.json"))
    grade = next(store_root.glob("grades/**/grade.json"))
    out = [("Run record", "run", orjson.loads(run.read_bytes())),
           ("Grade record", "grade", orjson.loads(grade.read_bytes()))]
    suites = ROOT / "suites"
    for kind in ("eval", "task", "config", "grader"):
        paths = sorted(suites.glob("*/eval.yaml" if kind == "eval" else f"*/{kind}s/*.yaml"))
        docs = [yaml.safe_load(p.read_text()) for p in paths]
        out += [(f"{kind} files ({len(docs)}), mean", kind, docs)]
    return out


def old_compiled(old: Any, schema: dict[str, Any]) -> Any:
    """The old hand-written validator of `schema`, or None where it does not know a keyword
    the schema has gained since (it is printed as n/a)."""
    try:
        return old.compile_schema(schema)
    except Exception as exc:
        if type(exc).__name__ == "Unsupported":
            return None
        raise


def report_records(store_root: Path, before: str) -> None:
    import jsonschema

    from smevals.schemas import load_schema, packaged

    old = fastschema(before)
    print(f"one validation, best of 5 x 500 (µs); fastschema from git at {before}")
    print(f"  {'document':<28}{'fastschema':>12}{'jsonschema':>12}{'jsonschema-rs':>15}")
    for label, kind, doc in documents(store_root):
        docs = doc if isinstance(doc, list) else [doc]
        slow = jsonschema.Draft202012Validator(load_schema(kind)).is_valid
        fast = packaged(kind).is_valid
        hand = old_compiled(old, load_schema(kind)) if old else None
        assert all(slow(d) and fast(d) and (hand is None or hand(d)) for d in docs), label
        cols = [hand, slow, fast]
        figures = [sum(per_call_us(c, d, 500) for d in docs) / len(docs) if c else None
                   for c in cols]
        print(f"  {label:<28}" + "".join(
            f"{(f'{f:.1f}' if f is not None else 'n/a'):>{w}}"
            for f, w in zip(figures, (12, 12, 15), strict=True)))


def report_options() -> None:
    """A grader's Check options, checked at `smevals validate` and before every Check runs."""
    import jsonschema

    from smevals import checkers
    from smevals.schemas import Schema

    for name, opts in (("contains", {"value": ["moon", "sun"], "case_sensitive": False}),
                       ("regex", {"pattern": "^a+$", "flags": "i"})):
        schema = {"type": "object", "properties": checkers.get_checker(name).all_properties()}
        slow = jsonschema.Draft202012Validator(schema).is_valid
        fast = Schema(schema).is_valid
        assert slow(opts) and fast(opts)
        print(f"  {name + ' options':<28}{'n/a':>12}{per_call_us(slow, opts):>12.1f}"
              f"{per_call_us(fast, opts):>15.1f}")


def report_all(store_root: Path, before: str) -> None:
    """Every record of the store, already parsed, through each validator (one process)."""
    import jsonschema
    import orjson

    from smevals.schemas import load_schema, packaged

    old = fastschema(before)
    records = [(kind, orjson.loads(p.read_bytes())) for kind in ("run", "grade")
               for p in store_root.glob(f"{kind}s/**/{kind}.json")]
    sample = records[::max(1, len(records) // 2000)]
    print(f"all {len(records):,} records of the store, parsed, validated in one process:")
    ways: dict[str, Any] = {"jsonschema-rs": lambda kind: packaged(kind).is_valid}
    if old is not None:
        ways["fastschema"] = lambda kind: old.compile_schema(load_schema(kind))
    ways["jsonschema"] = lambda kind: jsonschema.Draft202012Validator(load_schema(kind)).is_valid
    for name, make in ways.items():
        checks = {kind: make(kind) for kind in ("run", "grade")}
        subset = sample if name == "jsonschema" else records
        start = time.perf_counter()
        assert all(checks[kind](doc) for kind, doc in subset)
        seconds = (time.perf_counter() - start) * len(records) / len(subset)
        note = f" (from {len(subset):,} of them)" if subset is sample else ""
        print(f"  {name}: {seconds:.2f} s{note}")


def tree_at(rev: str, into: Path) -> Path | None:
    """The folder holding the package as it was at `rev` (git archive), for PYTHONPATH:
    `src/` from the src layout on, the top before; None when unknown."""
    into.mkdir(parents=True)
    for folder in ("src/smevals", "smevals"):
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, folder],
                                 capture_output=True)
        if archive.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
            return into / folder.removesuffix("smevals")
    return None


def timed(args: list[str], tree: Path, cache: Path) -> tuple[float, str]:
    """Seconds and stdout of `python ARGS` with the package of `tree`, no index cache."""
    env = {**os.environ, "PYTHONPATH": str(tree), "SMEVALS_CACHE_DIR": str(cache)}
    shutil.rmtree(cache, ignore_errors=True)
    start = time.perf_counter()
    # cwd: not the repository, whose smevals/ `python -m` would put before PYTHONPATH
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=cache.parent)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stderr}")
    return elapsed, proc.stdout


def report_commands(tmp: Path, store_root: Path, opts: argparse.Namespace) -> None:
    """Both trees taken in turn, `--repeats` times (the best of each is printed), so that
    other work on the machine weighs on both alike."""
    trees = {"now": ROOT / "src", f"at {opts.before}": tree_at(opts.before, tmp / "before")}
    probe = tmp / "load.py"
    probe.write_text(LOAD)
    ev = make_eval(tmp / "ev", opts.tasks, "#!/bin/sh\necho hi\n",
                   "checks:\n  - checker: contains\n    value: hi\n")
    loads: dict[str, list[float]] = {name: [] for name in trees}
    checks: dict[str, list[float]] = {name: [] for name in trees}
    count = "?"
    for _ in range(opts.repeats):
        for name, tree in trees.items():
            if tree is None:
                continue
            seconds, count, _broken = timed([str(probe), str(store_root)], tree,
                                            tmp / "cache")[1].split()
            loads[name].append(float(seconds))
            checks[name].append(timed(["-m", "smevals", "validate", str(ev)], tree,
                                      tmp / "cache")[0])
    for name in trees:
        if not loads[name]:
            print(f"  {name}: git archive failed, skipped")
            continue
        print(f"  {name}: cold load of {count} records (no index cache, page cache warm): "
              f"best {min(loads[name]):.2f} s, median {statistics.median(loads[name]):.2f} s; "
              f"smevals validate, {opts.tasks} Tasks (whole process): best "
              f"{min(checks[name]):.2f} s, median {statistics.median(checks[name]):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--before", default="6cb65e6",
                        help="the git revision whose store/fastschema.py and tree to compare")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-commands", action="store_true")
    opts = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="smevals-bench-valid-"))
    try:
        records = 2 if opts.skip_commands else opts.records
        store_root = tmp / "store"
        started = time.perf_counter()
        runs, _w, _r = storebench.build(store_root, "run", records // 2, 2, False, [])
        storebench.build(store_root, "grade", records - records // 2, 2, False,
                         [runs[i % len(runs)] for i in range(records - records // 2)])
        print(f"store of {records:,} records built in {time.perf_counter() - started:.0f} s")
        report_records(store_root, opts.before)
        report_options()
        report_all(store_root, opts.before)
        if not opts.skip_commands:
            report_commands(tmp, store_root, opts)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
