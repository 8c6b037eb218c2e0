"""A git history of the qa Eval for `smevals log` (tests/history/test_log.py): 30 commits made
by a script with the deterministic Builder (tests/helpers/qa.py): results added, answer
keys changed, the grader edited, a runner changed, a model added, a Task deleted, a damaged
commit repaired by the next, a branch merged, and a commit outside the Eval."""

from __future__ import annotations

from pathlib import Path

from smevals.evaldef.load import load_eval
from tests.helpers.qa import RUNNER, Builder, commit, git, make_qa, write

# The subjects of the commits where the grader version or a runner changed.
GRADER_CHANGED = ("grader edited, everything regraded",)
RUNNER_CHANGED = ("runner changed, new runs",)
DAMAGED = "a damaged run record"
MERGED = "Merge branch 'side'"


def reload(b: Builder) -> None:
    b.ev = load_eval(b.root, cached=False)


def add(b: Builder, model: str, task: str, n: int, outcome: str = "pass",
        config: str = "default") -> None:
    """`n` new Runs of model x task, each graded."""
    for _ in range(n):
        key = f"{model}-{task}-{b.clock}"
        b.run(key, task, model, config=config, sample=b.clock)
        b.grade(key, outcome, 1.0 if outcome == "pass" else 0.0)


def regrade(b: Builder, outcome_of: dict[str, str]) -> None:
    """Grade again every Run made so far whose Task still exists."""
    tasks = {t.name for t in b.ev.tasks}
    for key, run in list(b.made.items()):
        task = run.record["task"]["name"]
        if task in tasks:
            outcome = outcome_of.get(task, "pass")
            b.grade(key, outcome, 1.0 if outcome == "pass" else 0.0)


def history30(repo: Path) -> list[str]:
    """Make the 30 commits; the subjects, oldest first."""
    git(repo, "init", "-q", "-b", "main")
    make_qa(repo / "qa")
    subjects: list[str] = []

    def done(subject: str) -> None:
        commit(repo, subject)
        subjects.append(subject)

    done("eval only")
    b = Builder(repo / "qa")
    for i in range(6):                                         # 2 .. 7: results added
        add(b, "small", ["alpha", "beta", "gamma"][i % 3], 2, "fail" if i == 2 else "pass")
        done(f"small results {i}")
    write(repo / "README.md", "not the Eval\n")
    done("a readme, outside the Eval")                         # 8: not listed
    add(b, "large", "alpha", 2)
    done("a model added: large")                               # 9
    write(repo / "qa" / "tasks" / "delta.yaml",
          "prompt: What is 2 + 2?\ngrading:\n  answer: 'four'\n")
    reload(b)
    done("answer key of delta changed")                        # 10: delta's Grades out of date
    add(b, "small", "delta", 2)
    done("delta graded with the new key")                      # 11
    write(repo / "qa" / "graders" / "default.yaml",
          "checks:\n  - checker: contains\n    value: answer\n")
    reload(b)
    regrade(b, {"gamma": "fail"})
    done(GRADER_CHANGED[0])                                    # 12
    for i in range(4):                                         # 13 .. 16
        add(b, "large", ["beta", "gamma", "alpha", "delta"][i], 1)
        done(f"large results {i}")
    write(repo / "qa" / "configs" / "run.sh", RUNNER + "# v2\n", 0o755)
    reload(b)
    add(b, "small", "alpha", 2)
    add(b, "large", "alpha", 1)
    done(RUNNER_CHANGED[0])                                    # 17
    (repo / "qa" / "tasks" / "gamma.yaml").unlink()
    reload(b)
    done("task gamma deleted")                                 # 18
    last = [key for key in b.made if key.startswith("small-alpha-")][-1]
    record = repo / "qa" / "results" / b.made[last].rel / "run.json"
    good = record.read_bytes()
    record.chmod(0o644)
    record.write_bytes(good.replace(b'"sample"', b'"sample" ', 1))
    done(DAMAGED)                                              # 19
    record.write_bytes(good)
    done("the run record repaired")                            # 20
    git(repo, "checkout", "-q", "-b", "side")
    add(b, "small", "beta", 2)
    done("side: small beta results")                           # 21
    add(b, "small", "beta", 1, "fail")
    done("side: one more small beta")                          # 22
    git(repo, "checkout", "-q", "main")
    add(b, "large", "beta", 2)
    done("main: large beta results")                           # 23
    git(repo, "merge", "-q", "--no-ff", "-m", MERGED, "side")
    subjects.append(MERGED)                                    # 24
    for i in range(6):                                         # 25 .. 30
        add(b, "small" if i % 2 else "large", ["alpha", "beta", "delta"][i % 3], 1,
            "fail" if i == 4 else "pass")
        done(f"more results {i}")
    return subjects
