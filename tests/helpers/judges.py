"""A judge on the fake OpenAI server that answers from the prompt it is sent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from smevals.files.canonical import dumps, loads
from smevals.store import judgecache
from tests.helpers import grades_by_task as grades
from tests.helpers import make_eval
from tools.fake_openai import FakeOpenAI, Received, Scripted, completion


def answer_with(server: FakeOpenAI, decide: Callable[[str], Any],
                usage: dict[str, int] | None = None) -> None:
    """Answer every request with `decide(user message)`: a dict is sent as JSON text, a
    string as it is, a Scripted as scripted."""

    def respond(request: Received) -> Scripted:
        user = request.body["messages"][-1]["content"]
        found = decide(user)
        if isinstance(found, Scripted):
            return found
        text = found if isinstance(found, str) else json.dumps(found)
        return Scripted(200, completion(text, usage=usage))

    server.respond_with(respond)


def judge_eval(root: Path, server: FakeOpenAI, checks: str,
               extra: str = "  retries: 0\n") -> Path:
    """An Eval (tasks one and two, model m1) whose grader's judge is `server`; `extra` adds
    to the grader's judge block."""
    grader = (f"judge:\n  model: judge-x\n  base_url: {server.base_url}\n{extra}"
              f"checks:\n{checks}")
    return make_eval(root, graders={"default": grader})


def user_messages(server: FakeOpenAI) -> list[str]:
    return [r.body["messages"][-1]["content"] for r in server.requests]


def newest(evaldir: Path, task: str) -> dict[str, Any]:
    return grades(evaldir)[task][-1]


def judge_entries(ev: Path) -> list[Path]:
    """The judge cache entries of the Eval `ev`, sorted."""
    return sorted((ev / "results" / "judges").glob("*/*.json"))


def old_entry(entry: Path, verdict: dict[str, object], created: str) -> Path:
    """An entry for the same request as `entry`, answered with `verdict` at `created` (as a
    branch merged in would bring it); its name is the one its content gives."""
    record = loads(entry.read_bytes())
    record["response"]["content"] = json.dumps(verdict)
    record["created"] = created
    data = dumps(record)
    key = entry.name.split(".")[0]
    path = entry.parent / judgecache.entry_name(key, data)
    path.write_bytes(data)
    return path
