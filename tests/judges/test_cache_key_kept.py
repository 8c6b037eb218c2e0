"""The judge request keeps its bytes: an entry written by smevals before the request was
typed (store/records.py JudgeRequest) is still found, so no cached answer is asked again.

REQUEST and KEY are what `smevals grade` asked and named in its judge artifact at commit
8434832 for the Eval below (an llm_judge Check, model judge-x at http://127.0.0.1:9/v1)."""

from __future__ import annotations

import json
from pathlib import Path

from smevals.files.canonical import dumps
from smevals.schemas import Schema, load_schema
from smevals.store import judgecache
from smevals.store.records import JudgeEntry, JudgeRequest
from tests.helpers import grades_by_task, make_eval

ENDPOINT = "http://127.0.0.1:9/v1"      # nothing listens: an answer can only be the cache's
GRADER = (f"judge:\n  model: judge-x\n  base_url: {ENDPOINT}\n  retries: 0\n"
          "checks:\n  - checker: llm_judge\n    rubric: Is it polite?\n")
KEY = "3342b2086a87307db22a648c87f895c55f0787e773e11e85a1e30332858c183d"
SYSTEM = ("You are a careful, impartial grader. Judge only what is asked, using the material "
          "given. Answer with exactly one JSON object and nothing else, in this shape:\n"
          '{"reason": "<one or two sentences>", "pass": <true or false>}')
USER = ("The task given to the model:\n<task>\nhello one\n</task>\n\nThe model's response:\n"
        "<response>\nm1 says: hello one\n\n</response>\n\nRubric:\nIs it polite?\n\n"
        'Does the response meet the rubric? Set "pass" to true only if it does.')
REQUEST: JudgeRequest = {
    "backend": "openai", "endpoint": ENDPOINT, "model": "judge-x",
    "messages": [{"content": SYSTEM, "role": "system"}, {"content": USER, "role": "user"}],
    "params": {"max_tokens": 1024, "temperature": 0, "response_format": {
        "type": "json_schema", "json_schema": {"name": "judge_verdict", "strict": True, "schema": {
            "type": "object", "additionalProperties": False,
            "properties": {"pass": {"type": "boolean"}, "reason": {"type": "string"}},
            "required": ["reason", "pass"]}}}},
}
ENTRY: JudgeEntry = {
    "format": 1, "kind": "judge", "request": REQUEST,
    "response": {"content": '{"reason": "polite", "pass": true}', "body": "{}", "status": 200,
                 "usage": {"input_tokens": 50, "output_tokens": 9}, "latency_ms": 12.5},
    "created": "2026-01-01T00:00:00Z"}


def test_the_request_hashes_to_the_key_it_had() -> None:
    assert judgecache.request_key(REQUEST) == KEY


def test_an_entry_written_before_is_found(tmp_path: Path, cli) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello one\n"},
                   graders={"default": GRADER})
    assert cli("run", str(ev)).code == 0
    data = dumps(ENTRY)
    bucket = ev / "results" / judgecache.FOLDER / KEY[:2]
    bucket.mkdir(parents=True)
    (bucket / judgecache.entry_name(KEY, data)).write_bytes(data)
    res = cli("grade", str(ev))
    assert res.code == 0, res.both
    (grade,) = grades_by_task(ev)["one"]
    assert (grade["outcome"], grade["judge"]["calls"], grade["judge"]["cached"]) == ("pass", 0, 1)
    (artifact,) = (ev / "results").glob("grades/*/*/*/*/*/judge-1-llm-judge.json")
    assert json.loads(artifact.read_text())["calls"][0]["cache_key"] == KEY
    assert cli("verify", str(ev)).code == 0


def test_the_entry_matches_its_schema() -> None:
    schema = Schema(load_schema("judge"))
    assert schema.violations(ENTRY) == []
    broken = {**ENTRY, "request": {**REQUEST, "api_key": "sk-x"}}
    assert [v.message for v in schema.violations(broken)] == [
        "Additional properties are not allowed ('api_key' was unexpected)"]
