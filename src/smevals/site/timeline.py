"""What a Run did, step by step, for the Run page's timelines, and its `workspace.diff`.

Three sources, each turned into the entries of `transcript.jsonl` (files/transcript.py):

- the Run's own `transcript.jsonl` (an agent's messages, tool calls and results);
- else the tool calls a runner recorded in its usage (`usage.tool_calls`: calls only);
- the judge calls of the Grade that counts (`judge-N-<check>.json`, judges/engine.py):
  per call the request's messages, the judge's answer, its verdict or error, and the
  images it was sent: the request names each by its sha256, and the file of the Grade (a
  rendered PNG) or of the Run with that hash is shown beside the user's message as a
  thumbnail (`images`: name, sha256 and the file's links; `missing` when no file of either
  object has that hash).

Everything here is untrusted: files are read up to a cap, an entry keeps only the keys
of its type with the types the shape gives them, every text is cut at `TEXT_LIMIT`
characters (the page folds the long ones) and a timeline stops at `MAX_ENTRIES` entries
or `TOTAL_LIMIT` characters, saying so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from smevals.files import transcript
from smevals.site import artifacts
from smevals.site.data import Loaded
from smevals.site.texts import capped, read_text
from smevals.store.read import AnyObj, Obj
from smevals.store.records import GradeRecord, RunRecord

TRANSCRIPT_BYTES = 16 * 1024 * 1024     # bytes of transcript.jsonl read
JUDGE_BYTES = 4 * 1024 * 1024           # bytes of a judge-*.json read
DIFF_LIMIT = 256 * 1024                 # characters of workspace.diff shown
TEXT_LIMIT = 32 * 1024                  # characters of one text of an entry
TOTAL_LIMIT = 2 * 1024 * 1024           # characters of one timeline's texts
MAX_ENTRIES = 2000
MAX_IMAGES = 16                         # images shown beside one judge message
DIFF_NAME = "workspace.diff"
TEXT_KEYS = {"message": ("role", "text"), "tool_call": ("id", "name"),
             "tool_result": ("id", "name", "output"), "error": ("message",), "event": ()}


def _text(value: object) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + "\n[... cut]"


def clean(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An entry with only the keys of its type, each of the type the shape gives it (an
    unknown type is shown as an event, its whole line kept as `raw`)."""
    kind = entry.get("type")
    if kind not in TEXT_KEYS:
        return {"type": "event", "raw": capped(dict(entry), TEXT_LIMIT)}
    out: dict[str, Any] = {"type": kind}
    for key in TEXT_KEYS[kind]:
        if entry.get(key) is not None:
            out[key] = _text(entry[key])
    if kind == "tool_call" and "arguments" in entry:
        out["arguments"] = capped(entry["arguments"], TEXT_LIMIT)
    if kind == "tool_result":
        out["is_error"] = entry.get("is_error") is True
        code = entry.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool):
            out["exit_code"] = code
    if kind == "event":
        out["raw"] = capped(entry.get("raw"), TEXT_LIMIT)
    if kind == "message" and isinstance(entry.get("images"), list):
        out["images"] = [_image(i) for i in entry["images"][:MAX_IMAGES] if isinstance(i, dict)]
    for key in ("turn", "t"):
        value = entry.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = value
    return out


def _image(image: dict[str, Any]) -> dict[str, Any]:
    """An image a judge was sent: its name and hash (text), and the links of the file that
    has that hash (made here, never taken from the record)."""
    out: dict[str, Any] = {key: _text(image[key])[:200] for key in ("name", "sha256", "media_type")
                           if isinstance(image.get(key), str)}
    for key in ("src", "href", "download", "path"):
        if isinstance(image.get(key), str):
            out[key] = image[key]
    for key in ("width", "height"):
        if isinstance(image.get(key), int) and not isinstance(image.get(key), bool):
            out[key] = image[key]
    out["missing"] = "src" not in out
    return out


def _size(entry: dict[str, Any]) -> int:
    return len(orjson.dumps(entry))


def bounded(title: str, source: str, entries: Iterable[Mapping[str, Any]],
            file: dict[str, Any] | None = None, cut: str | None = None) -> dict[str, Any]:
    """A timeline of at most MAX_ENTRIES entries and TOTAL_LIMIT characters."""
    kept: list[dict[str, Any]] = []
    total = 0
    for entry in entries:
        if len(kept) >= MAX_ENTRIES or total > TOTAL_LIMIT:
            cut = f"shown up to {len(kept)} entries ({total:,} characters); the rest is in the file"
            break
        item = clean(entry)
        total += _size(item)
        kept.append(item)
    return {"title": title, "source": source, "entries": kept, "cut": cut,
            "file": file}


def _file(files: list[dict[str, Any]], path: str) -> dict[str, Any] | None:
    """The page's entry of one of the object's files (its links), when it can be read."""
    found = next((f for f in files if f.get("path") == path), None)
    return {"href": found["href"], "download": found.get("download")} \
        if found and found.get("href") else None


def listed(obj: AnyObj, path: str) -> bool:
    """Whether `obj` records `path` as a regular file."""
    entries = obj.record.get("files")
    return any(isinstance(e, dict) and e.get("path") == path and "symlink" not in e
               and not e.get("special") for e in (entries if isinstance(entries, list) else []))


def run_transcript(loaded: Loaded, run: Obj[RunRecord],
                   files: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not listed(run, transcript.NAME):
        return None
    data = artifacts.read_bytes(loaded.store, run, transcript.NAME, TRANSCRIPT_BYTES + 1)
    if data is None:
        return None
    cut = None
    if len(data) > TRANSCRIPT_BYTES:
        data = data[:data.rfind(b"\n", 0, TRANSCRIPT_BYTES) + 1]
        cut = f"only the first {TRANSCRIPT_BYTES // (1024 * 1024)} MiB of the file were read"
    return bounded("Transcript", transcript.NAME, transcript.parse(data),
                   _file(files, transcript.NAME), cut)


def usage_calls(run: Obj[RunRecord]) -> dict[str, Any] | None:
    """The tool calls the runner recorded in its usage, as a timeline of calls."""
    usage = run.record.get("usage")
    calls = usage.get("tool_calls") if isinstance(usage, dict) else None
    if not isinstance(calls, list) or not calls:
        return None
    return bounded("Tool calls", "usage.tool_calls", (_usage_call(c) for c in calls))


def _usage_call(item: object) -> dict[str, Any]:
    if isinstance(item, str):
        return {"type": "tool_call", "name": item}
    if not isinstance(item, dict):
        return {"type": "event", "raw": item}
    function = item["function"] if isinstance(item.get("function"), dict) else {}
    name = item.get("name") or item.get("tool") or function.get("name")
    args = next((v for v in (item.get("arguments"), item.get("args"),
                             function.get("arguments")) if v is not None), None)
    out: dict[str, Any] = {"type": "tool_call", "name": name if name is not None else "?"}
    if item.get("id") is not None:
        out["id"] = item["id"]
    if args is not None:
        out["arguments"] = args
    return out


Pictures = dict[str, dict[str, Any]]       # sha256 -> the page's entry of a file with it


def pictures_by_hash(objs: list[tuple[Obj[Any], list[dict[str, Any]]]]) -> Pictures:
    """The shown pictures among the files of `objs` (each with the page's entries of its
    files), by the sha256 their records give; the first object's file wins."""
    out: Pictures = {}
    for obj, files in objs:
        by_path = {f.get("path"): f for f in files if f.get("src")}
        entries = obj.record.get("files")
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or entry.get("path") not in by_path:
                continue
            digest = entry.get("sha256")
            if isinstance(digest, str) and digest not in out:
                shown = by_path[entry["path"]]
                out[digest] = {key: shown[key] for key in ("src", "href", "download", "path",
                                                           "width", "height") if key in shown}
    return out


def judge_timelines(loaded: Loaded, grade: Obj[GradeRecord] | None,
                    files: list[dict[str, Any]], pictures: Pictures | None = None
                    ) -> list[dict[str, Any]]:
    """One timeline per judge file of the Grade that counts."""
    if grade is None:
        return []
    entries = grade.record.get("files")
    names = sorted(str(e["path"]) for e in (entries if isinstance(entries, list) else [])
                   if isinstance(e, dict) and isinstance(e.get("path"), str)
                   and e["path"].startswith("judge-") and e["path"].endswith(".json")
                   and "/" not in e["path"])
    out = []
    for name in names:
        data = artifacts.read_bytes(loaded.store, grade, name, JUDGE_BYTES + 1) \
            if listed(grade, name) else None
        if data is None:
            continue
        try:
            doc = orjson.loads(data) if len(data) <= JUDGE_BYTES else None
        except orjson.JSONDecodeError:
            doc = None
        steps = judge_entries(doc, pictures or {}) if isinstance(doc, dict) else iter(
            [{"type": "error", "message": f"{name} is not a judge record (or is over the cap)"}])
        check = doc.get("check") if isinstance(doc, dict) else None
        title = f"Judge: {check}" if isinstance(check, str) and check else f"Judge: {name}"
        out.append(bounded(title[:200], name, steps, _file(files, name)))
    return out


def judge_entries(doc: dict[str, Any], pictures: Pictures | None = None
                  ) -> Iterator[dict[str, Any]]:
    """Each call of a judge record: its request's messages (the images it was sent beside
    the last user message), the answer, the verdict."""
    calls = doc.get("calls")
    for turn, call in enumerate(calls if isinstance(calls, list) else []):
        if not isinstance(call, dict):
            continue
        request = call.get("request")
        messages = request.get("messages") if isinstance(request, dict) else None
        said = [{"type": "message", "role": m.get("role"), "turn": turn,
                 "text": m.get("content")}
                for m in (messages if isinstance(messages, list) else []) if isinstance(m, dict)]
        images = _sent(call, pictures or {})
        if images:
            users = [e for e in said if e["role"] == "user"]
            if users:
                users[-1]["images"] = images
            else:
                said.append({"type": "message", "role": "user", "turn": turn, "images": images})
        yield from said
        if call.get("content") is not None:
            yield {"type": "message", "role": "assistant", "text": call["content"], "turn": turn}
        if call.get("verdict") is not None:
            yield {"type": "event", "raw": {"verdict": call["verdict"],
                                            "cached": call.get("cached")}, "turn": turn}
        if call.get("error"):
            yield {"type": "error", "message": call["error"], "turn": turn}


def _sent(call: dict[str, Any], pictures: Pictures) -> list[dict[str, Any]]:
    """The images of one judge call (the evidence names them; the request by hash alone),
    each with the links of the file that has its hash."""
    named = call.get("images")
    if not isinstance(named, list):
        request = call.get("request")
        named = request.get("images") if isinstance(request, dict) else None
    out = []
    for image in named if isinstance(named, list) else []:
        if isinstance(image, dict) and isinstance(image.get("sha256"), str):
            out.append({**{k: image[k] for k in ("name", "sha256", "media_type") if k in image},
                        **pictures.get(image["sha256"], {})})
    return out


def run_timelines(loaded: Loaded, run: Obj[RunRecord], files: list[dict[str, Any]],
                  grade: Obj[GradeRecord] | None,
                  grade_files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Run page's timelines: the Run's transcript (else its recorded tool calls), then
    the judge calls of the Grade that counts."""
    own = run_transcript(loaded, run, files) or usage_calls(run)
    pictures = pictures_by_hash(([(grade, grade_files)] if grade else []) + [(run, files)])
    return ([own] if own else []) + judge_timelines(loaded, grade, grade_files, pictures)


def workspace_diff(loaded: Loaded, run: Obj[RunRecord]) -> dict[str, Any] | None:
    """{"text", "truncated"} of the Run's `workspace.diff`, when it has one."""
    return read_text(loaded, run, DIFF_NAME, DIFF_LIMIT) if listed(run, DIFF_NAME) else None
