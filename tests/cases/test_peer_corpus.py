"""Fidelity measured against the peers themselves (principle 19): promptfoo's example configs
and Inspect's example tasks (tests/fixtures/peers, with their licences' notices), whose
per-assertion (promptfoo) and per-sample (Inspect) verdicts were produced by promptfoo
0.121.20's and inspect_ai 0.3.285's own CLIs against a fake server and recorded with the
answers (tools/peer_record.py). Here each is imported with smevals, the same answers are
graded offline, and every assertion the import says it kept exactly must get the peer's
verdict. The counts are the ones docs/migrating.md gives.

promptfoo: the imported Configs ask a fake server that answers only the recorded requests,
so a prompt promptfoo did not send (a prompt file read otherwise, a chat prompt flattened)
fails the test too. Inspect: the recorded answers are replayed (smevals:replay).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from smevals.importers.promptfoo import PromptfooImport, import_promptfoo
from tests.helpers import grade_records, run_cli
from tools.fake_openai import Received, Scripted, completion

PEERS = Path(__file__).resolve().parents[1] / "fixtures" / "peers"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "migrating.md"
JUDGES = ("llm_judge", "llm_score", "llm_category", "llm_answer_match", "llm_pairwise")


@dataclass
class Tally:
    configs: int = 0
    assertions: int = 0           # every assertion of every recorded result
    exact: int = 0                # imported and said to be kept exactly: compared
    reported: int = 0             # said not to be kept exactly, or not imported
    equal: int = 0
    differ: list[str] = field(default_factory=list)


def _key(model: str, messages: Any) -> str:
    return json.dumps([model, messages], sort_keys=True, ensure_ascii=False)


def _promptfoo_configs() -> list[tuple[Path, Path]]:
    out = []
    for config in sorted((PEERS / "promptfoo").glob("*/promptfooconfig*.yaml")):
        stem = config.stem.removeprefix("promptfooconfig").removeprefix("-")
        out.append((config, config.parent / (f"recorded-{stem}.json" if stem else
                                              "recorded.json")))
    return out


def _point_at(ev: Path, done: PromptfooImport, url: str) -> None:
    """Every imported Config asks the fake server; judge Checks (never compared: their
    verdicts are the judge's) are left out of the grader."""
    for name in done.configs:
        path = ev / "configs" / f"{name}.yaml"
        doc = yaml.safe_load(path.read_text())
        path.write_text(yaml.safe_dump({**doc, "base_url": url}, sort_keys=False))
    grader = ev / "graders" / "default.yaml"
    if grader.is_file():
        doc = yaml.safe_load(grader.read_text())
        doc["checks"] = [c for c in doc["checks"] if c["checker"] not in JUDGES]
        if doc["checks"]:
            grader.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
        else:
            grader.unlink()


def _prompt_changed(config: dict[str, Any]) -> bool:
    """Whether the import said it did not keep the prompt (a Nunjucks expression other than
    `{{var}}`, kept as literal text: `\\{{` in the template)."""
    template = config.get("prompt_template")
    texts = [template] if isinstance(template, str) else [
        m.get("content") for m in template or [] if isinstance(m, dict)]
    return any(isinstance(t, str) and "\\{{" in t for t in texts)


def _grade_promptfoo(config: Path, recorded: dict[str, Any], tmp: Path, server: Any,
                     tally: Tally) -> None:
    ev = tmp / config.parent.name / config.stem
    done = import_promptfoo(config, ev)
    _point_at(ev, done, server.base_url)
    answers = {_key(r["model"], r["messages"]): r["answer"] for r in recorded["requests"]}
    missed: list[str] = []

    def respond(req: Received) -> Scripted:
        key = _key(req.body["model"], req.body["messages"])
        if key not in answers:
            missed.append(key)
            return Scripted(418, {"error": "not a request promptfoo sent"})
        return Scripted(200, completion(answers[key]))

    server.respond_with(respond)
    kept = [name for name, plan in done.plans.items() if not _prompt_changed(plan.doc)]
    ran = run_cli("run", str(ev), "-j", "4", *[a for name in kept for a in ("-c", name)])
    assert missed == [], f"{config}: smevals sent prompts promptfoo did not:\n" + \
        "\n".join(missed[:3])
    assert ran.code == 0, ran.both
    if (ev / "graders" / "default.yaml").is_file():
        graded = run_cli("grade", str(ev), "-j", "4")
        assert graded.code in (0, 1, 2), graded.both
    checks = {(r["run"]["task"], r["run"]["config"]): {c.get("name"): c.get("ok")
                                                      for c in r["checks"]}
              for r in grade_records(ev)}
    _compare_promptfoo(config, done, recorded, checks, tally)


def _compare_promptfoo(config: Path, done: PromptfooImport, recorded: dict[str, Any],
                       checks: dict[tuple[str, str], dict[str, Any]], tally: Tally) -> None:
    plans = {(p.prompt, p.provider_label or p.provider_id): name
             for name, p in done.plans.items()}
    placed = {(a.task, a.position): a for a in done.assertions}
    tasks = _tasks_by_test(done, recorded)
    for result in recorded["results"]:
        task = tasks[result["test"]]
        name = plans.get((result["prompt"], result["provider"]))
        if name is not None and _prompt_changed(done.plans[name].doc):
            name = None                 # the prompt is not promptfoo's: not compared
        for position, verdict in enumerate(result["assertions"]):
            tally.assertions += 1
            fate = placed.get((task, position))
            assert fate is not None and fate.kind == verdict["type"], (config, task, position)
            if name is None or fate.fidelity != "exact" or fate.check is None:
                tally.reported += 1
                continue
            tally.exact += 1
            ours = checks.get((task, name), {}).get(fate.check)
            if ours == verdict["pass"]:
                tally.equal += 1
            else:
                tally.differ.append(f"{config.parent.name}/{config.name} {task} {name} "
                                    f"#{position} {fate.kind} ({fate.where}): promptfoo "
                                    f"{verdict['pass']}, smevals {ours}")


def _tasks_by_test(done: PromptfooImport, recorded: dict[str, Any]) -> dict[int, str]:
    """promptfoo's test index → the imported Task, matched by the test's vars (a glob's files
    come in the order the file system lists them for promptfoo, in name order for smevals;
    tests with the same vars are taken in order)."""
    free = list(done.vars.items())
    out: dict[int, str] = {}
    for result in sorted(recorded["results"], key=lambda r: r["test"]):
        if result["test"] in out:
            continue
        match = next(i for i, (_, v) in enumerate(free) if v == (result["vars"] or {}))
        out[result["test"]] = free.pop(match)[0]
    return out


def _documented(peer: str) -> tuple[int, int, int, int, int]:
    """(configs, assertions, imported exactly, reported, equal) as docs/migrating.md says."""
    text = " ".join(DOCS.read_text().split())
    m = re.search(rf"{peer} corpus: (\d+) \w+, (\d+) \w+ verdicts?: (\d+) kept exactly, "
                  rf"(\d+) reported, (\d+) equal", text)
    assert m, f"docs/migrating.md states no {peer} corpus counts"
    return tuple(int(g) for g in m.groups())  # type: ignore[return-value]


def test_promptfoo_verdicts_equal_promptfoos_own(tmp_path: Path, fake_openai) -> None:
    tally = Tally()
    for config, recording in _promptfoo_configs():
        recorded = json.loads(recording.read_text(encoding="utf-8"))
        assert recorded["peer"] == "promptfoo 0.121.20"
        tally.configs += 1
        _grade_promptfoo(config, recorded, tmp_path, fake_openai, tally)
    assert tally.differ == []
    assert tally.configs >= 20
    assert tally.equal == tally.exact
    assert (tally.configs, tally.assertions, tally.exact, tally.reported, tally.equal) == \
        _documented("promptfoo")


def _grade_inspect(name: str, spec: dict[str, Any], recorded: dict[str, Any], tmp: Path,
                   tally: Tally) -> None:
    from smevals.importers.inspect import import_inspect

    ev = tmp / "inspect" / name
    done = import_inspect(PEERS / "inspect" / spec["dataset"], ev, spec["scorer"],
                          spec["solver"], spec["system"])
    rows = [json.loads(r) for r in (ev / done.data_file).read_text().splitlines()]
    names = {i: row["name"] for i, row in enumerate(rows, 1)}      # Inspect numbers from 1
    by_id = {str(s.get("id", i)): names[i] for i, s in enumerate(_samples(spec), 1)}
    (ev / "configs" / "default.yaml").write_text(
        "runner: smevals:replay\nresponses: recorded.jsonl\nmodel: fake-model\n")
    with (ev / "configs" / "recorded.jsonl").open("w") as f:
        for s in sorted(recorded["samples"], key=lambda s: (str(s["id"]), s["epoch"])):
            task = by_id.get(str(s["id"])) or names[int(s["id"])]
            f.write(json.dumps({"task": task, "model": "fake-model", "output": s["answer"]})
                    + "\n")
    ran = run_cli("run", str(ev), "-n", str(recorded["epochs"]), "-j", "4")
    assert ran.code == 0, ran.both
    if done.scorer.exact:
        assert run_cli("grade", str(ev), "-j", "4").code in (0, 1), name
    ours = {(r["run"]["task"], _sample(ev, r)): r["outcome"] for r in grade_records(ev)}
    for s in recorded["samples"]:
        task = by_id.get(str(s["id"])) or names[int(s["id"])]
        tally.assertions += 1
        if not done.scorer.exact:
            tally.reported += 1
            continue
        tally.exact += 1
        (verdict,) = s["scores"].values()
        got = ours.get((task, s["epoch"] - 1))
        if (got == "pass") == (verdict == "C") and got in ("pass", "fail"):
            tally.equal += 1
        else:
            tally.differ.append(f"inspect {name} {task} epoch {s['epoch']} "
                                f"({s['answer']!r}): Inspect {verdict}, smevals {got}")


def _samples(spec: dict[str, Any]) -> list[dict[str, Any]]:
    text = (PEERS / "inspect" / spec["dataset"]).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _sample(ev: Path, grade: dict[str, Any]) -> int:
    """The sample index of a Grade's Run (its run.json in the store)."""
    run = json.loads((ev / "results" / grade["run"]["rel"] / "run.json").read_text())
    return int(run["sample"])


def test_inspect_verdicts_equal_inspects_own(tmp_path: Path) -> None:
    tasks = json.loads((PEERS / "inspect" / "tasks.json").read_text(encoding="utf-8"))
    tally = Tally()
    for name, spec in sorted(tasks.items()):
        recorded = json.loads((PEERS / "inspect" / f"recorded-{name}.json").read_text())
        assert recorded["peer"] == "inspect_ai 0.3.285"
        tally.configs += 1
        _grade_inspect(name, spec, recorded, tmp_path, tally)
    assert tally.differ == []
    assert tally.configs >= 5
    assert (tally.configs, tally.assertions, tally.exact, tally.reported, tally.equal) == \
        _documented("Inspect")
