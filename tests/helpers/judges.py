"""A judge on the fake OpenAI server that answers from the prompt it is sent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
