"""`images:` of the judge checkers: image parts of the request, named by hash in the cache key
and the evidence; a missing or non-image file refused before any call."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from tests.helpers import make_eval
from tests.helpers.judges import grades, newest
from tools.fake_openai import FakeOpenAI, Received, Scripted, completion
from tools.imagefiles import png

pytest.importorskip("resvg")

PHOTO = png(8, 4, (10, 200, 30))
RUNNER = f"""#!/usr/bin/env python3
import base64
print('```svg\\n<svg xmlns="http://www.w3.org/2000/svg" width="60" height="40">'
      '<circle cx="20" cy="20" r="15" fill="red"/></svg>\\n```')
open("photo.png", "wb").write(base64.b64decode("{base64.b64encode(PHOTO).decode()}"))
open("answer.svg", "w").write("<svg/>")
"""


def image_eval(root: Path, server: FakeOpenAI, checks: str) -> Path:
    grader = (f"judge:\n  model: judge-x\n  base_url: {server.base_url}\n  retries: 0\n"
              f"checks:\n{checks}")
    return make_eval(root, tasks={"one": "prompt: draw\ngrading:\n  picture: photo.png\n"},
                     configs={"default": "runner: ./draw.py\nmodel: m1\n"},
                     graders={"default": grader}, files={"configs/draw.py": RUNNER})


def approve(server: FakeOpenAI) -> None:
    def respond(request: Received) -> Scripted:
        return Scripted(200, completion(json.dumps({"reason": "a red circle", "pass": True}),
                                        usage={"prompt_tokens": 90, "completion_tokens": 9}))

    server.respond_with(respond)


CHECKS = """\
  - checker: render_svg
    output: drawing.png
    required: true
  - checker: llm_judge
    name: looks
    rubric: Is it a red circle?
    images: drawing.png
  - checker: llm_judge
    name: photo
    rubric: Is the photo green?
    images: {task: picture}
"""


def data_url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def test_images_are_sent_named_by_hash_and_answered_from_the_cache(tmp_path: Path, cli,
                                                                   fake_openai) -> None:
    approve(fake_openai)
    ev = image_eval(tmp_path / "ev", fake_openai, CHECKS)
    assert cli("run", str(ev)).code == 0
    res = cli("grade", str(ev))
    assert res.code == 0, res.both
    grade = newest(ev, "one")
    folder = Path(grade["_dir"])
    drawing = (folder / "drawing.png").read_bytes()
    assert drawing.startswith(b"\x89PNG")
    sent = [r.body["messages"][-1]["content"] for r in fake_openai.requests]
    assert len(sent) == 2
    by_rubric = {parts[0]["text"].split("Rubric:\n")[1].split("\n")[0]: parts for parts in sent}
    for rubric, image in (("Is it a red circle?", drawing), ("Is the photo green?", PHOTO)):
        parts = by_rubric[rubric]
        assert parts[0]["type"] == "text" and "<task>\ndraw\n</task>" in parts[0]["text"]
        assert parts[1:] == [{"type": "image_url", "image_url": {"url": data_url(image)}}]
    evidence = (folder / "judge-2-looks.json").read_text()
    assert "base64" not in evidence
    call = json.loads(evidence)["calls"][0]
    digest = hashlib.sha256(drawing).hexdigest()
    assert call["request"]["images"] == [{"media_type": "image/png", "sha256": digest}]
    assert call["images"] == [{"name": "drawing.png", "media_type": "image/png",
                               "sha256": digest, "bytes": len(drawing)}]
    photo = json.loads((folder / "judge-3-photo.json").read_text())["calls"][0]
    assert photo["images"][0]["name"] == "photo.png"
    assert photo["images"][0]["sha256"] == hashlib.sha256(PHOTO).hexdigest()

    res = cli("regrade", str(ev))                        # the same requests: the cache answers
    assert res.code == 0, res.both
    assert len(fake_openai.requests) == 2
    again = grades(ev)["one"]
    assert len(again) == 2
    assert again[-1]["judge"]["calls"] == 0 and again[-1]["judge"]["cached"] == 2
    assert (Path(again[-1]["_dir"]) / "drawing.png").read_bytes() == drawing


REFUSALS = [
    ("images: nope.png", "option 'images': no such file: nope.png"),
    ("images: [photo.png, answer.svg]",
     "option 'images': answer.svg is not an image the judge can be sent (one of PNG, JPEG, "
     "GIF, WEBP) (render an SVG to a PNG first: render_svg)"),
    ("images: run.json", "option 'images': run.json is not an image the judge can be sent "
                         "(one of PNG, JPEG, GIF, WEBP)"),
]


def test_a_missing_or_non_image_file_fails_before_any_call(tmp_path: Path, cli,
                                                           fake_openai) -> None:
    approve(fake_openai)
    checks = "".join(f"  - checker: llm_judge\n    name: c{i}\n    rubric: ok?\n    {line}\n"
                     for i, (line, _notes) in enumerate(REFUSALS))
    ev = image_eval(tmp_path / "ev", fake_openai, checks)
    cli("run", str(ev))
    res = cli("grade", str(ev))
    assert res.code == 1, res.both
    assert fake_openai.requests == []
    found = newest(ev, "one")["checks"]
    assert [(c["ok"], c.get("error", False), c["notes"]) for c in found] == [
        (False, False, notes) for _line, notes in REFUSALS]


def test_validate_refuses_bad_image_names(tmp_path: Path, cli, fake_openai) -> None:
    ev = image_eval(tmp_path / "ev", fake_openai,
                    "  - checker: llm_judge\n    rubric: ok?\n    images: [a.png, ../b.png]\n"
                    "  - checker: llm_score\n    rubric: ok?\n    threshold: 0.5\n"
                    "    images: 7\n")
    res = cli("validate", str(ev))
    assert res.code == 2
    assert "images: an image may not contain '..' ('../b.png')" in res.both
    assert "expected an image file name, or a list of 1 to 16, got 7" in res.both


def test_replay_selects_on_the_image_hash(tmp_path: Path, cli) -> None:
    digest = hashlib.sha256(PHOTO).hexdigest()
    lines = [{"image_sha256": "0" * 64, "verdict": {"reason": "another picture", "pass": False}},
             {"image_sha256": digest, "verdict": {"reason": "this picture", "pass": True}}]
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: draw\n"},
                   configs={"default": "runner: ./draw.py\nmodel: m1\n"},
                   graders={"default": "judge: {backend: replay, responses: answers.jsonl}\n"
                            "checks:\n  - checker: llm_judge\n    rubric: ok?\n"
                            "    images: photo.png\n"},
                   files={"configs/draw.py": RUNNER,
                          "graders/answers.jsonl": "\n".join(map(json.dumps, lines))})
    cli("run", str(ev))
    res = cli("grade", str(ev))
    assert res.code == 0, res.both
    assert newest(ev, "one")["checks"][0]["details"]["reason"] == "this picture"
    lines[1]["image_sha256"] = "1" * 64                   # no line names this picture now
    (ev / "graders" / "answers.jsonl").write_text("\n".join(map(json.dumps, lines)))
    res = cli("regrade", str(ev))
    assert res.code == 2, res.both
    assert newest(ev, "one")["checks"][0]["notes"] == (
        f"judge error: answers.jsonl has no replayed answer for task 'one', model 'm1', check "
        f"'llm_judge', image_sha256 '{digest}'")
