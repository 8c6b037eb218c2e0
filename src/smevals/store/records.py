"""The shapes of Run and Grade records and of their brief views, for the type checker.

They mirror schemas/run.schema.json and schemas/grade.schema.json (a key the schema does
not require is `NotRequired`) and the brief views of store/brief.py. At run time they are
plain dicts: nothing here is checked or converted, and the store reads and writes records
exactly as before. A record is typed once it has passed its schema (store/read.py gives
`Obj[RunRecord]` and `Obj[GradeRecord]`); parsing and validating code keeps `dict[str, Any]`.

A brief view keeps only some keys, each with the full record's shape or a part of it, so
its keys are read-only: then a full record may stand wherever a brief one is read
(`Obj[RunRecord]` is an `Obj[RunBrief]`), and code that reads both kinds takes the brief
type. The Task document, the resolved Config, metrics and a Check's details are documents
of their authors and stay `dict[str, Any]`. A Run's usage is `Usage` (schemas/
usage.schema.json, whose every key is optional and which takes other keys too: a reader
still checks each value it uses, since a runner wrote it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from smevals.files.workspace import FileEntry

if TYPE_CHECKING:                   # typing.ReadOnly is Python 3.13+; only mypy reads these
    from typing_extensions import ReadOnly

__all__ = ["CheckBrief", "CheckRecord", "Failure", "FileEntry", "GradeBrief", "GradeFields",
           "GradeRecord", "GraderRef", "GraderRefBrief", "ImageRef", "Inputs", "JudgeEntry",
           "JudgeRequest", "JudgeResponse", "JudgeUsage", "Label", "RunBrief", "RunFields",
           "RunRecord", "RunRef", "RunRefBrief", "TamperMark", "Truncation", "Usage",
           "WorkspaceChanges"]

Status = Literal["ok", "failed"]
Outcome = Literal["pass", "fail", "error"]


class Inputs(TypedDict):
    """Hashes of what determines a Run (run/plan.py `inputs_of`)."""

    hash: str
    task: str
    config: str
    runner: str
    workspace: NotRequired[str]     # the digest of the Task's starting files, when it has some


class WorkspaceChanges(TypedDict):
    """What a Run's agent did to the Task's starting files (run/workspace.py): the digest
    of the starting files, and the paths it changed, added and deleted. The final tree is
    the starting files minus `deleted`, with the Run's own files on top."""

    hash: str
    changed: list[str]
    added: list[str]
    deleted: list[str]


class Ignored(TypedDict):
    """Generated noise left out of a Run (run/ignore.py): the rules, and the files (and
    their bytes) they removed before the Run was sealed."""

    rules: list[str]
    files: int
    bytes: int


class Failure(TypedDict):
    kind: str                   # exit, timeout, signal, launch or artifact
    detail: str


class Truncation(TypedDict):
    kept_bytes: int
    written_bytes: int


class Usage(TypedDict, total=False):
    """What a runner reports about one attempt (usage.schema.json, smevals-usage.json),
    recorded in run.json under `usage`. Every key is optional, and a runner may add others."""

    input_tokens: int
    cached_input_tokens: int
    cache_creation_input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    total_tokens: int
    cost_usd: float
    latency_ms: float
    http_status: int
    model: str
    sandbox: str
    harness_sandbox: str
    tool_calls: list[dict[str, Any] | str]


class RunFields(TypedDict):
    """run.json as its writer gives it to `Staging.commit` (which adds format, kind and
    the files)."""

    eval: str
    task: dict[str, Any]                # the Task document given to the runner
    grading: NotRequired[dict[str, Any]]
    config: dict[str, Any]              # the resolved Config: name, runner, model, ...
    model: str
    inputs: Inputs
    sample: NotRequired[int]
    started: str
    ended: str
    duration_seconds: float
    exit_code: NotRequired[int | None]
    status: Status
    failure: NotRequired[Failure | None]
    text: NotRequired[dict[str, Any]]
    truncated: NotRequired[dict[str, Truncation]]     # by file name: output.txt, stderr.txt
    usage: NotRequired[Usage | None]
    usage_error: NotRequired[str]
    workspace: NotRequired[WorkspaceChanges]   # a Task with starting files: what changed
    ignored: NotRequired[Ignored]       # generated noise removed before sealing
    provenance: NotRequired[dict[str, Any]]


class RunRecord(RunFields):
    """run.json."""

    format: int
    kind: Literal["run"]
    files: list[FileEntry]


class RunBrief(TypedDict):
    """The brief view of run.json: `task` and `config` hold only their `name`."""

    model: ReadOnly[str]
    status: ReadOnly[Status]
    sample: ReadOnly[NotRequired[int]]
    started: ReadOnly[str]
    duration_seconds: ReadOnly[float]
    failure: ReadOnly[NotRequired[Failure | None]]
    truncated: ReadOnly[NotRequired[dict[str, Truncation]]]
    task: ReadOnly[dict[str, Any]]
    config: ReadOnly[dict[str, Any]]
    inputs: ReadOnly[Inputs]
    provenance: ReadOnly[NotRequired[dict[str, Any]]]     # only its `runner`


class CheckRecord(TypedDict):
    """One Check's result in grade.json (checker results as normalised by grade/)."""

    checker: str
    name: NotRequired[str]
    ok: NotRequired[bool]
    skipped: NotRequired[bool]
    score: NotRequired[float | None]
    metrics: NotRequired[dict[str, Any]]
    tags: NotRequired[list[str]]
    notes: NotRequired[str]
    details: NotRequired[dict[str, Any]]
    error: NotRequired[bool]
    seconds: NotRequired[float]
    _weight: NotRequired[float]         # while grading only: removed before the record


class CheckBrief(TypedDict):
    """A Check in the brief view: its notes only when it failed."""

    checker: ReadOnly[str]
    name: ReadOnly[NotRequired[str]]
    ok: ReadOnly[NotRequired[bool]]
    skipped: ReadOnly[NotRequired[bool]]
    error: ReadOnly[NotRequired[bool]]
    score: ReadOnly[NotRequired[float | None]]
    notes: ReadOnly[NotRequired[str]]


class RunRef(TypedDict):
    """The Run a Grade is of."""

    id: str
    rel: str
    task: str
    config: str
    model: str


class RunRefBrief(TypedDict):
    rel: ReadOnly[str]
    task: ReadOnly[str]


class GraderRef(TypedDict):
    name: str
    version: str
    file: NotRequired[str]


class GraderRefBrief(TypedDict):
    name: ReadOnly[str]
    version: ReadOnly[str]


class JudgeUsage(TypedDict, total=False):
    """Judge calls of all Checks of a Grade summed."""

    calls: float
    cached: float
    input_tokens: float
    output_tokens: float
    cost_usd: float


class Label(TypedDict, total=False):
    """A person's verdict (grader human): who and why."""

    by: dict[str, Any]
    note: str


class TamperMark(TypedDict):
    """One tampering mark of a Grade (grade/tampering.py): the path and the kind."""

    path: str
    kind: str


class GradeFields(TypedDict):
    """grade.json as its writer gives it to `Staging.commit`."""

    eval: str
    run: RunRef
    grader: GraderRef
    grading_hash: str
    graded: str
    duration_seconds: NotRequired[float]
    outcome: Outcome
    score: float | None
    method: NotRequired[str]
    tags: list[str]
    metrics: dict[str, Any]
    checks: list[CheckRecord]
    smevals: NotRequired[str]
    label: NotRequired[Label]
    judge: NotRequired[JudgeUsage]
    tampering: NotRequired[list[TamperMark]]
    tampering_cut: NotRequired[int]


class GradeRecord(GradeFields):
    """grade.json."""

    format: int
    kind: Literal["grade"]
    files: list[FileEntry]


class GradeBrief(TypedDict):
    """The brief view of grade.json: `run` holds rel and task, `grader` name and version,
    `checks` every Check without its details (notes only for the failed ones)."""

    grading_hash: ReadOnly[str]
    graded: ReadOnly[str]
    outcome: ReadOnly[Outcome]
    score: ReadOnly[float | None]
    tags: ReadOnly[list[str]]
    metrics: ReadOnly[dict[str, Any]]
    judge: ReadOnly[NotRequired[JudgeUsage]]
    tampering: ReadOnly[NotRequired[list[TamperMark]]]
    run: ReadOnly[RunRefBrief]
    grader: ReadOnly[GraderRefBrief]
    checks: ReadOnly[Sequence[CheckBrief]]


class ImageRef(TypedDict):
    """An image a judge request sends, as the request (and so the cache key) names it."""

    media_type: str
    sha256: str


class JudgeRequest(TypedDict):
    """What a judge is asked (judges/asking.py), exactly: the judge cache's key is the
    sha256 of its canonical JSON (store/judgecache.py), so its keys and their values must
    never change shape, or every cached answer is asked again. Never a key or a header."""

    backend: str
    endpoint: str                   # the place answering, without key or query
    model: str
    messages: list[dict[str, Any]]  # chat messages: role and content (text or parts)
    params: dict[str, Any]          # temperature, max_tokens, seed, response_format
    images: NotRequired[list[ImageRef]]


class JudgeResponse(TypedDict, total=False):
    """A judge's answer as the cache keeps it."""

    content: str                    # the verdict text
    body: str                       # the response body as received
    status: int | None
    usage: dict[str, Any]           # the backend's token counts, in smevals' names
    latency_ms: float | None


class JudgeEntry(TypedDict):
    """One judge cache entry (judge.schema.json): `<store>/judges/<2 hex>/<key>.<12 hex>.json`."""

    format: int
    kind: Literal["judge"]
    request: JudgeRequest
    response: JudgeResponse
    created: str                    # when it was stored (UTC)
