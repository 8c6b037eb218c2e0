"""The `llm` extra: the `smevals:llm` runner and the `llm` judge backend, with the offline
`echo` model of the llm-echo plugin (a dev dependency)."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.helpers import make_eval
from tests.helpers.judges import newest

# Found without importing it (llm takes half a second to import, in every test process
# that collects this module); imported by smevals when a test runs.
pytestmark = pytest.mark.skipif(find_spec("llm_echo") is None,
                                reason="the llm-echo plugin (a dev dependency) is missing")

VERDICT = '{"raw": "{\\"reason\\": \\"echoed\\", \\"pass\\": true}"}'


@pytest.fixture(autouse=True)
def _llm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))


def test_llm_runner_and_judge_with_the_echo_model(tmp_path: Path, cli) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello one\n"},
                   configs={"default": "runner: smevals:llm\nmodel: echo\nsystem: be brief\n"},
                   graders={"default": "judge: {backend: llm, model: echo, "
                            "allow_same_family: true}\nchecks:\n"
                            "  - checker: llm_judge\n    rubric: r\n"
                            "    template_file: verdict.txt\n"},
                   files={"graders/verdict.txt": VERDICT})
    res = cli("run", str(ev))
    assert res.code == 0, res.both
    run = next((ev / "results" / "runs").rglob("run.json")).parent
    echoed = json.loads((run / "output.txt").read_text())
    assert (echoed["prompt"], echoed["system"]) == ("hello one", "be brief")
    assert json.loads((run / "run.json").read_text())["usage"]["input_tokens"] == 4
    res = cli("grade", str(ev))
    assert res.code == 0, res.both
    grade = newest(ev, "one")
    assert grade["checks"][0]["details"]["reason"] == "echoed"
    assert grade["judge"]["calls"] == 1
    cli("regrade", str(ev))
    assert newest(ev, "one")["judge"] == {"calls": 0, "cached": 1, "input_tokens": 0,
                                          "output_tokens": 0}


def test_llm_runner_refuses_unknown_models_and_options(tmp_path: Path, cli) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hi\n"},
                   configs={"default": "runner: smevals:llm\nmodel: no-such-model\n",
                            "opts": "runner: smevals:llm\nmodel: echo\noptions: {bogus: 1}\n"})
    res = cli("run", str(ev), "-c", "default")
    assert res.code == 1
    stderr = next((ev / "results" / "runs").rglob("stderr.txt")).read_text()
    assert "smevals:llm: llm model 'no-such-model': UnknownModelError" in stderr
    res = cli("validate", str(ev))
    assert res.code == 0, res.both
    res = cli("run", str(ev), "-c", "opts")
    assert res.code == 1


def test_llm_judge_gets_images_as_attachments(tmp_path: Path, cli) -> None:
    from tools.imagefiles import png

    picture = png(4, 4)
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello one\n"},
                   configs={"default": "runner: ./draw.sh\nmodel: echo\n"},
                   graders={"default": "judge: {backend: llm, model: echo, "
                            "allow_same_family: true}\nchecks:\n"
                            "  - checker: llm_judge\n    rubric: r\n    images: pic.png\n"},
                   files={"configs/draw.sh": "#!/bin/sh\necho drawn\n"
                          "cp \"$SMEVALS_EVAL_DIR/pic.png\" pic.png\n"})
    (ev / "pic.png").write_bytes(picture)      # the runner leaves it in its Run
    assert cli("run", str(ev)).code == 0
    res = cli("grade", str(ev))
    assert res.code == 2, res.both          # the echo model's answer is not a verdict
    kept = json.loads(next(Path(newest(ev, "one")["_dir"]).glob("judge-*.json")).read_text())
    echoed = json.loads(kept["calls"][0]["content"])
    import hashlib

    assert [(a["type"], a["id"]) for a in echoed["attachments"]] == [
        ("image/png", hashlib.sha256(picture).hexdigest())]
