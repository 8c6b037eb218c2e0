"""Benchmark prompt templates: what checking and filling a Config's `prompt_template` and
`system` costs, on an Eval of --tasks Tasks (warm definitions cache).

Prints the time of checking and of filling the templates for every Task in-process (best of
--repeats), then the median time of `smevals validate` and of `smevals run --dry-run` (which
plans, so fills every template) with a Config without templates, with one with templates, and
with both (`-c plain -c templated`).

Usage: python bench/templates.py [--tasks 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import make_eval, timed, write  # noqa: E402

TEMPLATED = """runner: ./r.sh
model: m1
system: You answer questions about task {{task.name}}.
prompt_template: |
  Question: {{task.prompt}}
  Expected form: {{ task.expected }}
"""


def in_process(ev: Path, repeats: int) -> None:
    import time

    from smevals.evaldef.load import load_eval
    from smevals.run.prompts import given_task, resolve_config, template_problems

    loaded = load_eval(ev, cached=False)
    config = loaded.configs["templated"]
    for label, work in (
        ("check (template_problems)", lambda: template_problems(config, loaded.tasks)),
        ("fill prompt and system", lambda: [(given_task(t, config), resolve_config({}, config, t))
                                            for t in loaded.tasks]),
    ):
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            work()
            best = min(best, time.perf_counter() - start)
        print(f"  {label:<38} {best:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ev = make_eval(Path(tmp) / "ev", args.tasks, "#!/bin/sh\necho hi\n",
                       "checks:\n  - checker: contains\n    value: hi\n")
        write(ev / "configs" / "plain.yaml", "runner: ./r.sh\nmodel: m1\n")
        write(ev / "configs" / "templated.yaml", TEMPLATED)
        env = {"SMEVALS_CACHE_DIR": str(Path(tmp) / "cache")}
        timed(["validate", str(ev)], env)                       # fill the definitions cache
        cases = {
            "validate": ["validate", str(ev)],
            "run --dry-run -c plain": ["run", str(ev), "--dry-run", "-c", "plain"],
            "run --dry-run -c templated": ["run", str(ev), "--dry-run", "-c", "templated"],
            "run --dry-run -c plain -c templated": ["run", str(ev), "--dry-run", "-c", "plain",
                                                    "-c", "templated"],
        }
        print(f"{args.tasks} Tasks, in-process, best of {args.repeats} (seconds):")
        in_process(ev, args.repeats)
        print(f"{args.tasks} Tasks, commands, median of {args.repeats} (seconds):")
        for label, command in cases.items():
            times = [timed(command, env) for _ in range(args.repeats)]
            print(f"  {label:<38} {statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
