"""Human labels (`smevals label`), shown and committed, and `report --agreement`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smevals.evaldef.load import load_eval
from smevals.grade.version import grader_version
from tests.helpers import git, make_eval

# Eleven one-Run tasks: the grader passes t0-t4 and t10 (the output contains "says") and
# fails t5-t9. People label t0-t3 pass and t4 fail, t5 pass and t6-t9 fail; t10 is unlabelled.
WORDS = {f"t{i}": ("says" if i < 5 or i == 10 else "nope") for i in range(11)}
PEOPLE = {**{f"t{i}": "pass" for i in (0, 1, 2, 3, 5)},
          **{f"t{i}": "fail" for i in (4, 6, 7, 8, 9)}}


@pytest.fixture
def labelled(cli, tmp_path: Path) -> Path:
    """A git repository with the Eval `ev` run and graded, its user Ada Lovelace."""
    tasks = {name: f"prompt: p\ngrading:\n  word: {word}\n" for name, word in WORDS.items()}
    make_eval(tmp_path / "ev", tasks=tasks, graders={
        "default": "checks:\n  - checker: contains\n    value: {task: word}\n",
        "lenient": "checks:\n  - checker: contains\n    value: says\n"})
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.name", "Ada Lovelace")
    git(tmp_path, "config", "user.email", "ada@example.com")
    res = cli("run", "ev", "-g", cwd=tmp_path)
    assert res.code == 1, res.both                     # t5-t9 fail
    return tmp_path


def run_ids(root: Path) -> dict[str, str]:
    out = {}
    for record in (root / "ev" / "results" / "runs").rglob("run.json"):
        out[json.loads(record.read_text())["task"]["name"]] = record.parent.name
    return out


def labels(root: Path) -> list[Path]:
    return sorted((root / "ev" / "results" / "grades" / "human").rglob("grade.json"))


def test_a_label_is_an_immutable_grade_of_human_with_who(cli, labelled: Path) -> None:
    run = run_ids(labelled)["t4"]
    res = cli("label", run[-12:], "fail", "ev", "--note", "rude tone", cwd=labelled)
    assert res.code == 0, res.both
    [path] = labels(labelled)
    grade = path.parent.name
    assert res.out == (f"Labelled Run {run} fail: Grade {grade}\n"
                       f"  ev/results/grades/human/t4/default/m1/{grade}\n")
    record = json.loads(path.read_text())
    assert record["grader"] == {"name": "human", "version": "label"}
    assert (record["outcome"], record["score"], record["run"]["id"]) == ("fail", 0.0, run)
    assert record["label"] == {"by": {"name": "Ada Lovelace", "email": "ada@example.com",
                                      "source": "git"}, "note": "rude tone"}
    assert record["checks"] == [{"checker": "human", "name": "label", "ok": False,
                                 "score": 0.0, "notes": "rude tone"}]
    first = path.read_bytes()

    res = cli("label", run, "pass", "ev", "--by", "Grace", cwd=labelled)   # a second opinion
    assert res.code == 0, res.both
    assert len(labels(labelled)) == 2 and path.read_bytes() == first       # never edited
    assert cli("verify", "ev", cwd=labelled).code == 0

    res = cli("show", run, "ev", cwd=labelled)
    assert res.code == 0, res.both
    newest = next(p for p in labels(labelled) if p != path).parent.name
    lines = res.out.split("\nlabels (newest first):\n")[1].splitlines()
    assert [line.split(" at ")[0] for line in lines] == ["  pass by Grace", "  fail by Ada "
                                                         "Lovelace <ada@example.com>",
                                                         "    note: rude tone"]
    assert lines[0].endswith(f"(Grade {newest}, counts)")
    assert lines[1].endswith(f"(Grade {grade})")

    make_eval(labelled / "ev", graders={"default": "checks:\n  - checker: contains\n"
                                                   "    value: m1\n"})     # a new version
    res = cli("gc", "ev", "--superseded", cwd=labelled)
    assert res.code == 0 and "human" not in res.out and "11 item(s) removed" in res.out
    assert len(labels(labelled)) == 2                                   # labels are kept
    path.write_text(path.read_text().replace('"fail"', '"pass"'))        # editing is damage
    res = cli("verify", "ev", cwd=labelled)
    assert res.code == 1 and "1 problem(s)" in res.err


def test_labels_are_committed_with_the_results(cli, labelled: Path) -> None:
    run = run_ids(labelled)["t0"]
    assert cli("label", run, "pass", "ev", cwd=labelled).code == 0
    git(labelled, "add", "-A")
    git(labelled, "commit", "-qm", "results and a label")
    assert "ev/results/grades/human/t0/default/m1/" in git(labelled, "ls-files")
    for path in labels(labelled):
        path.unlink()
    res = cli("show", run, "ev", "--rev", "HEAD", cwd=labelled)
    assert res.code == 0, res.both
    assert "\nlabels (newest first):\n  pass by Ada Lovelace <ada@example.com> at " in res.out


def test_label_refuses_bad_input(cli, labelled: Path) -> None:
    run = run_ids(labelled)["t0"]
    res = cli("label", run, "maybe", "ev", cwd=labelled)
    assert res.code == 2 and "'maybe' is not one of 'pass', 'fail'" in res.err
    grade = next((labelled / "ev" / "results" / "grades").rglob("grade.json")).parent.name
    res = cli("label", grade, "pass", "ev", cwd=labelled)
    assert res.code == 2
    assert res.err.startswith(f"Error: {grade} is a Grade ({grade}); label the Run it grades: ")
    res = cli("label", "ffffffffff", "pass", "ev", cwd=labelled)
    assert res.code == 2
    assert res.err == "Error: no Run or Grade with id 'ffffffffff' in the stores of ev\n"
    assert labels(labelled) == []


def test_a_grader_may_not_be_called_human(cli, tmp_path: Path) -> None:
    make_eval(tmp_path / "ev", graders={"human": "checks:\n  - checker: contains\n"
                                                 "    value: x\n"})
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2
    assert "ev/graders/human.yaml:1:1: the grader name 'human' is reserved" in res.err


def label_all(cli, root: Path) -> dict[str, str]:
    ids = run_ids(root)
    for task, verdict in PEOPLE.items():
        assert cli("label", ids[task], verdict, "ev", "--note", f"{task} note",
                   cwd=root).code == 0
    return ids


def test_agreement_matches_a_hand_computed_example(cli, labelled: Path) -> None:
    """Of 10 Runs both judged: 4 pass/pass, 1 pass/fail, 1 fail/pass, 4 fail/fail.
    po = 0.8; pe = 0.5 * 0.5 + 0.5 * 0.5 = 0.5; kappa = (0.8 - 0.5) / (1 - 0.5) = 0.6;
    se = sqrt(0.8 * 0.2 / (10 * 0.5 ** 2)) = 0.25298; 0.6 -+ 1.96 se = 0.104 to 1.096 -> 1."""
    ids = label_all(cli, labelled)
    version = grader_version(load_eval(labelled / "ev").graders["default"])
    res = cli("report", "ev", "--agreement", "default", cwd=labelled)
    assert (res.code, res.err) == (0, ""), res.both
    a = f"default@{version}"
    assert res.out == (
        f"# ev: {a} against human\n\n"
        f"Runs graded by both: 10 · only by {a}: 1 · only by human: 0\n\n"
        f"| {a} \\ human | pass | fail |\n"
        "| --- | ---: | ---: |\n"
        "| pass | 4 | 1 |\n"
        "| fail | 1 | 4 |\n\n"
        "- Agreement (accuracy): 8 of 10 (80.0%)\n"
        "- Cohen's kappa: 0.600 (95% interval 0.104 to 1.000)\n\n"
        "## Disagreements (2)\n\n"
        f"| Run | task | config | model | {a} | human | first failing check |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n"
        f"| {ids['t4']} | t4 | default | m1 | pass | fail | label: t4 note |\n"
        f"| {ids['t5']} | t5 | default | m1 | fail | pass | contains: output.txt does not "
        "contain 'nope' |\n")
    res = cli("report", "ev", "--agreement", f"default:{version[:6]}", "--json", "-t", "t4",
              "-t", "t5", "-t", "t6", cwd=labelled)
    assert res.code == 0, res.both
    [doc] = json.loads(res.out)["agreement"]
    assert doc["grader"] == f"default@{version[:6]}"
    assert (doc["both"], doc["agreed"], doc["only_grader"]) == (3, 1, 0)
    assert doc["matrix"] == [{"grader": "fail", "against": "fail", "runs": 1},
                             {"grader": "fail", "against": "pass", "runs": 1},
                             {"grader": "pass", "against": "fail", "runs": 1}]
    # po = 1/3, pe = (2/3)(2/3) + (1/3)(1/3) = 5/9, kappa = (1/3 - 5/9) / (4/9) = -0.5
    assert doc["kappa"] == pytest.approx(-0.5)


def test_agreement_between_two_graders(cli, labelled: Path) -> None:
    assert cli("grade", "ev", "-g", "lenient", cwd=labelled).code == 0
    res = cli("report", "ev", "--agreement", "lenient", "--against", "default", "--json",
              cwd=labelled)
    assert res.code == 0, res.both
    [doc] = json.loads(res.out)["agreement"]
    assert (doc["both"], doc["agreed"]) == (11, 6)
    assert doc["kappa"] == pytest.approx(0.0)          # lenient passes every Run: chance
    res = cli("report", "ev", "--agreement", "lenient", "--against", "default", "-t", "t0",
              "-t", "t1", cwd=labelled)
    assert res.code == 0, res.both
    assert "- Cohen's kappa: undefined (both gave every Run the same outcome)\n" in res.out
    assert res.out.endswith("\nNo disagreements.\n")
    assert sorted(d["run"] for d in doc["disagreements"]) == \
        sorted(run_ids(labelled)[f"t{i}"] for i in range(5, 10))
    res = cli("report", "ev", "--agreement", "nope", cwd=labelled)
    assert res.code == 2 and "no grader named 'nope'" in res.err
    res = cli("report", "ev", "--agreement", "default", "--format", "csv", cwd=labelled)
    assert res.code == 2 and "the format is markdown or json" in res.err


def test_labelled_runs_become_fixtures(cli, labelled: Path) -> None:
    ids = label_all(cli, labelled)
    res = cli("test", "ev", "-g", "default", "--from-labels", cwd=labelled)
    assert res.code == 1, res.both            # the grader disagrees with people on t4 and t5
    folder = "ev/graders/default.fixtures"
    made = [line for line in res.out.splitlines() if line.startswith("wrote ")]
    assert sorted(made) == sorted(f"wrote {folder}/label-{ids[t]}.yaml" for t in PEOPLE)
    assert res.out.endswith("10 case(s): 8 ok, 2 mismatch(es)\n")
    case = (labelled / folder / f"label-{ids['t4']}.yaml").read_text()
    assert "task: t4\noutput_file: labels/" in case and "expect: fail\n" in case
    assert "note: t4 note" in case
    assert (labelled / folder / "labels" / ids["t4"] / "output.txt").read_text() == \
        "m1 says: p\n"
    res = cli("test", "ev", "-g", "default", "--from-labels", cwd=labelled)   # nothing new
    assert not [line for line in res.out.splitlines() if line.startswith("wrote ")]


def test_kappa_over_three_outcomes_by_hand() -> None:
    """20 Runs, outcomes pass/fail/error. po = 16/20 = 0.8; row shares 10, 6, 4 and column
    shares 9, 7, 4 (of 20): pe = (90 + 42 + 16) / 400 = 0.37; kappa = 0.43 / 0.63 = 0.68254;
    se = sqrt(0.16 / (20 * 0.63^2)) = 0.14197; interval 0.68254 -+ 0.27826."""
    from smevals.report.agreement import cohen_kappa

    cells = {("pass", "pass"): 8, ("pass", "fail"): 1, ("pass", "error"): 1,
             ("fail", "pass"): 1, ("fail", "fail"): 5,
             ("error", "fail"): 1, ("error", "error"): 3}
    kappa = cohen_kappa(cells)
    assert kappa == pytest.approx((0.68254, 0.40428, 0.96080), abs=5e-5)
    assert cohen_kappa({}) is None
    assert cohen_kappa({("pass", "pass"): 4}) is None
