"""`smevals score` (cli/score_cmd.py): an ai-eval-forge case file scored, or two result files
compared, as ai-eval-forge does it (smevals.cases)."""

from __future__ import annotations

from pathlib import Path


def score_file(path: str, markdown: bool) -> tuple[str, str | None]:
    """The scored case file as JSON (or Markdown), and why it failed (None: every case
    passed)."""
    from smevals.cases import read_cases, score_cases
    from smevals.cases.scoring import render_json, render_markdown

    doc = score_cases(read_cases(Path(path)))
    failed = doc["summary"]["failed"]
    why = f"{failed} of {doc['summary']['total']} case(s) failed" if failed else None
    return render_markdown(doc) if markdown else render_json(doc), why


def compare_files(before: str, after: str, fmt: str,
                  labels: tuple[str, str]) -> tuple[str, str | None]:
    """The case-by-case comparison of two result files, and why it failed (None: no
    regression and no removed case)."""
    from smevals.cases.compare import compare, failed, load_results, render_markdown
    from smevals.cases.scoring import render_json

    result = compare(load_results(Path(before)), load_results(Path(after)), labels)
    why = None
    if failed(result):
        counts = result["counts"]
        why = f"{counts['regression']} regression(s), {counts['removed']} removed case(s)"
    return render_markdown(result) if fmt == "markdown" else render_json(result), why
