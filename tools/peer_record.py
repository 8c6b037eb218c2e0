"""Record the peers' own verdicts for the import corpus (tests/fixtures/peers/): run
promptfoo's and Inspect's CLIs against a fake OpenAI-compatible server that answers from a
script, and keep each answer and each verdict, per assertion (promptfoo) or per sample and
epoch (Inspect). tests/cases/test_peer_corpus.py imports the same configs and datasets with
smevals, grades the recorded answers offline and compares.

Not run by the tests or CI (the peers are not installed there). To record again:

    npm install --prefix .peer-tools promptfoo@0.121.20
    python3 -m venv .peer-tools/inspect-venv
    .peer-tools/inspect-venv/bin/pip install inspect-ai==0.3.285 openai
    python tools/peer_record.py promptfoo [EXAMPLE ...]
    python tools/peer_record.py inspect [TASK ...]

The answers come from each corpus's `answers.json` (example or task → candidate answers):
the candidate for a request is chosen by a hash of the model and the messages, so the same
request always gets the same answer. A grading request of promptfoo's model-graded
assertions gets a JSON verdict; of Inspect's model-graded scorers a `GRADE:` line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.fake_openai import FakeOpenAI, Received, Scripted, completion  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "peers"
TOOLS = ROOT / ".peer-tools"
PROMPTFOO = TOOLS / "node_modules" / ".bin" / "promptfoo"
INSPECT = TOOLS / "inspect-venv" / "bin" / "inspect"
GRADING = ("grading output according to a user-specified rubric", "factuality evaluator",
           "assessing a submitted answer", "comparing a submitted answer")


def pick(candidates: list[str], key: str) -> str:
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return candidates[int.from_bytes(digest[:4], "big") % len(candidates)]


class Answerer:
    """The fake server's responder: scripted answers, each (model, messages) remembered."""

    def __init__(self, candidates: list[str], cycle: bool = False) -> None:
        self.candidates = candidates
        self.cycle = cycle            # the same request again gets the next candidate
        self.seen: dict[str, dict[str, Any]] = {}
        self.asked: dict[str, int] = {}

    def __call__(self, req: Received) -> Scripted:
        if not req.path.endswith("/chat/completions"):
            return Scripted(404, {"error": {"message": f"no {req.path} here"}})
        body = req.body
        model, messages = body.get("model", ""), body.get("messages", [])
        key = json.dumps([model, messages], sort_keys=True, ensure_ascii=False)
        text = json.dumps(messages, ensure_ascii=False)
        if any(marker in text for marker in GRADING):
            return Scripted(200, completion(self._grade(text, key), model=model))
        answer = pick(self.candidates, key)
        if self.cycle:
            n = self.asked[key] = self.asked.get(key, -1) + 1
            answer = self.candidates[(self.candidates.index(answer) + n) % len(self.candidates)]
        self.seen[key] = {"model": model, "messages": messages, "answer": answer}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        return Scripted(200, completion(answer, model=model, usage=usage))

    @staticmethod
    def _grade(text: str, key: str) -> str:
        passed = pick(["yes", "no"], key) == "yes"
        if "factuality evaluator" in text:
            return json.dumps({"category": "C" if passed else "D", "reason": "scripted"})
        if "[Criterion]" in text:
            return "Y" if passed else "N"
        if "GRADE:" in text or "GRADE: C" in text:
            return "GRADE: C" if passed else "GRADE: I"
        return json.dumps({"reason": "scripted", "pass": passed, "score": 1 if passed else 0})


def _env(server: FakeOpenAI, home: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8",
            "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-fake",
            "OPENAI_API_BASE_URL": server.base_url,
            "PROMPTFOO_CONFIG_DIR": str(home / "pf"), "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_CACHE_ENABLED": "false",
            "PROMPTFOO_PYTHON": sys.executable, "PROMPTFOO_DISABLE_REMOTE_GRADING": "true",
            "PROMPTFOO_SELF_HOSTED": "1", "NO_COLOR": "1"}


# --- promptfoo --------------------------------------------------------------------------


def record_promptfoo(names: list[str]) -> None:
    corpus = CORPUS / "promptfoo"
    answers = json.loads((corpus / "answers.json").read_text(encoding="utf-8"))
    for example in names or sorted(answers):
        for config in sorted((corpus / example).glob("promptfooconfig*.yaml")):
            print(f"promptfoo: {example}/{config.name}", flush=True)
            _one_promptfoo(config, answers[example])


def _one_promptfoo(config: Path, candidates: list[str]) -> None:
    answerer = Answerer(candidates)
    server = FakeOpenAI().start()
    server.respond_with(answerer)
    with tempfile.TemporaryDirectory(prefix="peer-record-") as tmp:
        home, out = Path(tmp), Path(tmp) / "out.json"
        try:
            run = subprocess.run(
                [str(PROMPTFOO), "eval", "-c", config.name, "-o", str(out), "--no-cache",
                 "-j", "1", "--no-table", "--no-progress-bar"],
                cwd=config.parent, env=_env(server, home), capture_output=True, text=True,
                timeout=600, check=False)
        finally:
            server.close()
        if not out.is_file():
            raise SystemExit(f"promptfoo failed on {config}:\n{run.stdout}\n{run.stderr}")
        doc = json.loads(out.read_text(encoding="utf-8"))
    results = [_result(r) for r in doc["results"]["results"]]
    recorded = {"peer": f"promptfoo {_version()}", "config": config.name,
                "requests": sorted(answerer.seen.values(), key=lambda r: json.dumps(r)),
                "results": sorted(results, key=lambda r: (r["test"], r["prompt"],
                                                          r["provider"]))}
    name = "recorded.json" if config.name == "promptfooconfig.yaml" else \
        f"recorded-{config.stem.removeprefix('promptfooconfig-')}.json"
    (config.parent / name).write_text(json.dumps(recorded, indent=1, ensure_ascii=False)
                                      + "\n", encoding="utf-8")


def _version() -> str:
    found = TOOLS / "node_modules" / "promptfoo" / "package.json"
    return json.loads(found.read_text())["version"] if found.is_file() else ""


def _result(r: dict[str, Any]) -> dict[str, Any]:
    grading = r.get("gradingResult") or {}
    components = grading.get("componentResults") or []
    provider = r.get("provider") or {}
    return {"test": r.get("testIdx"), "prompt": r.get("promptIdx"), "vars": r.get("vars"),
            "provider": provider.get("label") or provider.get("id"),
            "output": (r.get("response") or {}).get("output"),
            "error": r.get("error"),
            "assertions": [{"type": (c.get("assertion") or {}).get("type"),
                            "pass": c.get("pass"), "score": c.get("score")}
                           for c in _top_level(components)]}


def _top_level(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The assertions' own results: promptfoo lists a result's own componentResults (a
    javascript assertion may return some) right after it, one level deep."""
    out, i = [], 0
    while i < len(components):
        out.append(components[i])
        i += 1 + len(components[i].get("componentResults") or [])
    return out


# --- Inspect ----------------------------------------------------------------------------


def record_inspect(names: list[str]) -> None:
    corpus = CORPUS / "inspect"
    tasks = json.loads((corpus / "tasks.json").read_text(encoding="utf-8"))
    for name in names or sorted(tasks):
        print(f"inspect: {name}", flush=True)
        _one_inspect(corpus, name, tasks[name])


TASK = """from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import {scorer_name}
from inspect_ai.solver import generate, multiple_choice, system_message


@task
def corpus():
    return Task(dataset=json_dataset({dataset!r}), solver=[{solvers}], scorer={scorer})
"""


def _task_file(corpus: Path, spec: dict[str, Any], folder: Path) -> Path:
    """The task, written from the corpus's spec (the dataset, scorer and solver the
    example names), for `inspect eval`."""
    solvers = ([f"system_message({spec['system']!r})"] if spec.get("system") else []) + \
        [spec.get("solver") or "generate()"]
    path = folder / "corpus_task.py"
    path.write_text(TASK.format(scorer_name=spec["scorer"].split("(")[0],
                                dataset=str(corpus / spec["dataset"]),
                                solvers=", ".join(solvers), scorer=spec["scorer"]),
                    encoding="utf-8")
    return path


def _one_inspect(corpus: Path, name: str, spec: dict[str, Any]) -> None:
    answerer = Answerer(spec["answers"], cycle=True)
    server = FakeOpenAI().start()
    server.respond_with(answerer)
    with tempfile.TemporaryDirectory(prefix="peer-record-") as tmp:
        home = Path(tmp)
        env = _env(server, home) | {"FAKE_API_KEY": "sk-fake", "FAKE_BASE_URL": server.base_url,
                                    "INSPECT_LOG_DIR": str(home / "logs")}
        try:
            run = subprocess.run(
                [str(INSPECT), "eval", _task_file(corpus, spec, home).name, "--model",
                 "openai-api/fake/fake-model", "--epochs", str(spec["epochs"]),
                 "--log-format", "json", "--max-connections", "1", "--display", "plain"],
                cwd=home, env=env, capture_output=True, text=True, timeout=600, check=False)
        finally:
            server.close()
        logs = sorted((home / "logs").glob("*.json"))
        if not logs:
            raise SystemExit(f"inspect failed on {name}:\n{run.stdout}\n{run.stderr}")
        log = json.loads(logs[-1].read_text(encoding="utf-8"))
    samples = [{"id": s["id"], "epoch": s["epoch"], "answer": _completion(s),
                "scores": {k: v.get("value") for k, v in (s.get("scores") or {}).items()}}
               for s in log["samples"]]
    version = log["eval"].get("packages", {}).get("inspect_ai", "")
    recorded = {"peer": f"inspect_ai {version}", "task": name, "epochs": spec["epochs"],
                "samples": sorted(samples, key=lambda s: (str(s["id"]), s["epoch"]))}
    (corpus / f"recorded-{name}.json").write_text(json.dumps(recorded, indent=1,
                                                             ensure_ascii=False) + "\n",
                                                  encoding="utf-8")


def _completion(sample: dict[str, Any]) -> str:
    choices = (sample.get("output") or {}).get("choices") or []
    content = choices[0]["message"]["content"] if choices else ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("peer", choices=["promptfoo", "inspect"])
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    if shutil.which("node") is None:
        raise SystemExit("node is needed")
    (record_promptfoo if args.peer == "promptfoo" else record_inspect)(args.names)


if __name__ == "__main__":
    main()
