"""Checks per second for each built-in checker on a 10 KB output.

Run: PYTHONPATH=. python bench/checkers.py [--seconds 0.5]
Target: >= 2,000 checks/s for every checker except match_output, command (each starts a
sandboxed process), bleu and rouge;
render_svg (a 20 KB SVG, 400x300 px): >= 50 renders/s on one core.
>= 200 queries/s for sql_execution (a join over a 10,000-row table, reference and answer run).
The judge checkers and custom_webhook call a server and are left out (bench/judge.py).
Each check goes through run_check (option handling included), as in a Grade.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from smevals.checkers import CheckInput, checker_names, run_check

SIZE = 10 * 1024
# These start a process per check (a program, node, Python) or score a whole text.
EXEMPT = {"match_output", "command", "bleu", "rouge", "render_svg", "javascript", "python"}
SVG_TARGET = 50
# Each check copies the database and runs SQL: their own target, per second.
SQL_TARGET = {"sql_execution": 200, "sql_valid": 200}
# These ask a server for every check (bench/judge.py measures the judges against one).
REMOTE = {"custom_webhook", "llm_answer_match", "llm_category", "llm_judge", "llm_pairwise",
          "llm_score"}


def prose(size: int = SIZE) -> str:
    rng = random.Random(7)
    words = [
        "the",
        "cat",
        "sat",
        "on",
        "a",
        "mat",
        "while",
        "model",
        "outputs",
        "were",
        "graded",
        "by",
        "smevals",
        "checks",
    ]
    parts: list[str] = []
    while sum(map(len, parts)) + len(parts) < size:
        parts.append(rng.choice(words) + rng.choice(["", "", "", ",", "."]))
    return " ".join(parts)[:size]


def json_doc(size: int = SIZE) -> str:
    items = [{"id": i, "name": f"item {i}", "tags": ["a", "b"], "ok": True} for i in range(400)]
    doc = {"answer": 42, "items": items}
    while len(json.dumps(doc)) > size:
        items.pop()
    return json.dumps(doc)


def xml_doc(size: int = SIZE) -> str:
    rows: list[str] = []
    while sum(map(len, rows)) < size - 20:
        rows.append(f'<row id="{len(rows)}">value {len(rows)}</row>')
    return "<rows>" + "".join(rows) + "</rows>"


def locations(size: int = SIZE) -> str:
    lines: list[str] = []
    while sum(map(len, lines)) < size:
        n = len(lines)
        lines.append(f"src/module_{n}.py:{n}-{n + 20}\n")
    return "".join(lines)


def svg_doc(size: int = 20 * 1024) -> str:
    """A detailed drawing of about `size` bytes, as a model writes one: a sky, ground, and
    many small shapes (feathers, spokes, leaves) as paths, circles and ellipses."""
    rng = random.Random(11)
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300" '
             'viewBox="0 0 400 300"><rect width="400" height="300" fill="#dff3ff"/>'
             '<rect y="230" width="400" height="70" fill="#9bd17a"/>']
    while sum(map(len, parts)) < size - 10:
        x, y, colour = rng.randint(10, 390), rng.randint(10, 290), rng.randrange(16**6)
        r = rng.randint(3, 14)
        parts.append(rng.choice([
            f'<circle cx="{x}" cy="{y}" r="{r}" fill="#{colour:06x}"/>',
            f'<ellipse cx="{x}" cy="{y}" rx="{r + 4}" ry="{r}" fill="#{colour:06x}" '
            f'stroke="#333" stroke-width="1"/>',
            f'<path d="M{x} {y} q{r} {-r} {2 * r} 0 t{2 * r} 0" fill="none" '
            f'stroke="#{colour:06x}" stroke-width="2" stroke-linecap="round"/>',
        ]))
    return "".join(parts) + "</svg>"


TEXT = prose()
USAGE = {
    "input_tokens": 900,
    "output_tokens": 300,
    "total_tokens": 1200,
    "cost_usd": 0.004,
    "latency_ms": 812.0,
    "http_status": 200,
    "tool_calls": [{"name": f"tool_{i % 7}", "arguments": {"q": f"x{i}"}} for i in range(20)],
}
REFERENCE = prose(600)
# TEXT with four edits in three places: the distance is found along the band. The other
# levenshtein figures: an unrelated 10 KB text (the exact, quadratic computation) and a
# short expected value.
NEAR_COPY = TEXT[:1000] + "X" + TEXT[1001:5000] + TEXT[5001:9000] + "YZ" + TEXT[9000:]
JOIN = ("SELECT c.name, COUNT(*), SUM(o.amount) FROM customers c JOIN orders o "
        "ON o.customer_id = c.id WHERE c.city = 'city7' GROUP BY c.name ORDER BY c.name")
# Every one of the 10,000 orders joined and grouped: bound by SQLite's own speed.
FULL_SCAN = ("SELECT c.city, COUNT(*), SUM(o.amount) FROM orders o JOIN customers c "
             "ON c.id = o.customer_id GROUP BY c.city ORDER BY c.city")


def shop_script(orders: int = 10_000) -> str:
    """A .sql script: 500 customers in 20 cities, `orders` orders (the 10k-row table)."""
    rng = random.Random(11)
    lines = ["CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT);",
             "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL);",
             "CREATE INDEX orders_customer ON orders (customer_id);",
             "CREATE INDEX customers_city ON customers (city);"]
    lines += [f"INSERT INTO customers VALUES ({i}, 'c{i}', 'city{i % 20}');" for i in range(500)]
    lines += [f"INSERT INTO orders VALUES ({i}, {rng.randrange(500)}, "
              f"{rng.randrange(100, 100_000) / 100});" for i in range(orders)]
    return "\n".join(lines) + "\n"

CASES: dict[str, tuple[dict[str, Any], str]] = {
    "contains": ({"value": ["smevals", "graded", "zebra"], "threshold": 0.5}, TEXT),
    "exact": ({"value": TEXT.upper()}, TEXT),
    "exact_match": ({"expected": TEXT}, TEXT),
    "not_contains": ({"fragments": ["zebra", "giraffe"]}, TEXT),
    "blocklist": ({"terms": ["zebra", "mat", "graded"]}, TEXT),
    "levenshtein": ({"value": NEAR_COPY}, TEXT),
    "regex": ({"pattern": r"(checks?|graded)\s+by\s+zebra", "flags": "i"}, TEXT),
    "not_regex": ({"pattern": r"\bzebra\b"}, TEXT),
    "json_valid": ({}, json_doc()),
    "json_field": ({"path": "items.-1.ok", "value": True}, json_doc()),
    "json_schema": (
        {
            "schema": {
                "type": "object",
                "required": ["answer", "items"],
                "properties": {
                    "answer": {"type": "integer"},
                    "items": {"type": "array", "items": {"type": "object", "required": ["id"]}},
                },
            }
        },
        json_doc(),
    ),
    "json_path_assertion": ({"path": "items.3.name", "equals": "item 3"}, json_doc()),
    "token_f1": ({"value": REFERENCE, "threshold": 0.5}, TEXT),
    "bleu": ({"reference": REFERENCE}, TEXT),
    "rouge": ({"reference": REFERENCE, "rouge_type": "rouge_l"}, TEXT),
    "citation_coverage": ({"sources": ["mat", "cat", "zebra"]}, TEXT),
    "context_f1": (
        {"expected": ["the cat sat on a mat", "graded by smevals"], "retrieved": ["a cat sat"]},
        TEXT,
    ),
    "localization_f1": ({"reference": "src/module_3.py:1-10\nsrc/other.py"}, locations()),
    "no_pii": ({}, TEXT),
    "tool_called": ({"tools": ["tool_1", "tool_5"]}, TEXT),
    "tool_not_called": ({"tools": ["delete_all"]}, TEXT),
    "tool_sequence": ({"tools": ["tool_1", "tool_3", "tool_6"]}, TEXT),
    "tool_argument_assertion": ({"tool": "tool_6", "path": "q", "equals": "x13"}, TEXT),
    "http_status": ({"status": 200}, TEXT),
    "latency_threshold": ({"max_ms": 1000}, TEXT),
    "cost_threshold": ({"max_usd": 0.01}, TEXT),
    "token_threshold": ({"max_tokens": 2000}, TEXT),
    "xml_valid": ({"file": "doc.xml"}, TEXT),
    "render_svg": ({"file": "doc.svg"}, TEXT),
    "sql_execution": (
        {"database": "shop.sql", "reference": JOIN},
        "```sql\n" + JOIN.replace("ORDER BY c.name", "ORDER BY 1") + ";\n```\n",
    ),
    "sql_valid": ({"database": "shop.sql"}, "```sql\n" + JOIN + ";\n```\n"),
    "command": ({"command": "test -f doc.xml"}, TEXT),
    "match_output": (
        {"expected_output": "42"},
        "Here it is:\n```python\nprint(6 * 7)\n```\n" + TEXT,
    ),
    "equals": ({"value": json.loads(json_doc())}, json_doc()),
    "inspect_match": ({"target": ["zebra", "42"], "numeric": True}, TEXT + " 42"),
    "inspect_exact": ({"target": TEXT.upper()}, TEXT),
    "inspect_choice": ({"target": "B", "choices": 4}, TEXT + "\nANSWER: B"),
    "javascript": ({"code": "output.includes('smevals')"}, TEXT),
    "python": ({"code": "'smevals' in output"}, TEXT),
}


# Variants printed after the catalog, to show what drives a figure.
EXTRA: dict[str, tuple[str, dict[str, Any], str]] = {
    "json_schema (top-level only)": (
        "json_schema",
        {"schema": {"type": "object", "required": ["answer", "items"]}},
        json_doc(),
    ),
    "bleu (variant: caveman)": ("bleu", {"reference": REFERENCE, "variant": "caveman"}, TEXT),
    "levenshtein (other 10 KB)": ("levenshtein", {"value": (REFERENCE * 20)[:SIZE]}, TEXT),
    "levenshtein (short value)": ("levenshtein", {"value": "the cat sat on a mat"}, TEXT),
    "regex (1 KB output)": ("regex", {"pattern": r"graded\s+by\s+zebra"}, prose(1024)),
    "sql_execution (full scan)": (
        "sql_execution",
        {"database": "shop.sql", "reference": FULL_SCAN},
        "```sql\n" + FULL_SCAN + "\n```\n",
    ),
    "localization_f1 (20 lines)": (
        "localization_f1",
        {"reference": "src/module_3.py:1-10\nsrc/other.py"},
        locations(500),
    ),
}


def rate(name: str, inp: CheckInput, options: dict[str, Any], seconds: float) -> float:
    """Best of five batches (a busy machine only ever slows a batch down)."""
    run_check(name, options, inp)  # warm caches and lazy imports
    best = 0.0
    for _ in range(5):
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / 5:
            run_check(name, options, inp)
            count += 1
        best = max(best, count / elapsed)
    return best


def svg_rate(inp: CheckInput, seconds: float, file: str = "doc.svg") -> float:
    """render_svg writes a new PNG each time (it never overwrites one): a name per render.
    Most of the time is resvg's (through its `resvg` binding), in the renderer's child
    process; the CPU per render (both processes) is kept in RENDER_CPU."""
    names = (f"{file}-{i}.png" for i in range(10**9))
    run_check("render_svg", {"file": file, "output": next(names)}, inp)   # starts the child
    best = 0.0
    cpu, renders = 0.0, 0
    for _ in range(5):
        count, start, used = 0, time.perf_counter(), _render_cpu()
        while (elapsed := time.perf_counter() - start) < seconds / 5:
            run_check("render_svg", {"file": file, "output": next(names)}, inp)
            count += 1
        best = max(best, count / elapsed)
        cpu, renders = cpu + _render_cpu() - used, renders + count
    RENDER_CPU[file] = 1000 * cpu / max(renders, 1)
    return best


RENDER_CPU: dict[str, float] = {}      # CPU ms per render: this process and the renderer's


def _render_cpu() -> float:
    """CPU seconds (user + system) of this process and of the renderer's child process."""
    from smevals.checkers import svg

    used = time.process_time()
    for worker in svg._WORKER.values():
        proc = getattr(worker, "_proc", None)
        if proc is not None:
            with open(f"/proc/{proc.pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            used += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=0.5, help="time per checker")
    args = parser.parse_args()
    missing = set(checker_names()) - set(CASES) - REMOTE
    if missing:
        print(f"no bench case for: {', '.join(sorted(missing))}", file=sys.stderr)
        return 2
    slow = []
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        (workspace / "doc.xml").write_text(xml_doc(), encoding="utf-8")
        (workspace / "doc.svg").write_text(svg_doc(), encoding="utf-8")
        (workspace / "small.svg").write_text(svg_doc(2048), encoding="utf-8")
        (workspace / "shop.sql").write_text(shop_script(), encoding="utf-8")
        print(f"{'checker':26} {'checks/s':>10}  {'ok':>5}")
        for name in sorted(set(checker_names()) - REMOTE):
            options, output = CASES[name]
            inp = CheckInput(output=output, task={}, usage=USAGE, workspace=workspace,
                             grader_dir=workspace, run_workspace=lambda: workspace)
            if name == "render_svg":
                per_second = svg_rate(inp, args.seconds)
                ok = (workspace / "doc.svg-0.png").is_file()
                mark = "" if per_second >= SVG_TARGET else f"  < {SVG_TARGET}"
                slow += [name] if mark else []
                print(f"{name:26} {per_second:10,.0f}  {ok!s:>5}{mark}")
                continue
            ok = run_check(name, options, inp).ok
            per_second = rate(name, inp, options, args.seconds)
            target = SQL_TARGET.get(name, 2000)
            mark = "" if per_second >= target or name in EXEMPT else f"  < {target}"
            slow += [name] if mark else []
            print(f"{name:26} {per_second:10,.0f}  {ok!s:>5}{mark}")
        for label, (name, options, output) in EXTRA.items():
            inp = CheckInput(output=output, task={}, usage=USAGE, workspace=workspace,
                             grader_dir=workspace, run_workspace=lambda: workspace)
            print(f"{label:26} {rate(name, inp, options, args.seconds):10,.0f}")
        inp = CheckInput(output="", task={}, usage=USAGE, workspace=workspace)
        print(f"{'render_svg (2 KB SVG)':26} {svg_rate(inp, args.seconds, 'small.svg'):10,.0f}")
        print(f"render_svg CPU per render (this process and the renderer's): "
              f"{RENDER_CPU.get('doc.svg', 0):.1f} ms (20 KB), "
              f"{RENDER_CPU.get('small.svg', 0):.1f} ms (2 KB), so "
              f"{1000 / max(RENDER_CPU.get('doc.svg', 0), 0.001):.0f} renders/s of one core "
              f"(load average {os.getloadavg()[0]:.1f})")
    print(f"below their target (2,000 checks/s; render_svg {SVG_TARGET}/s; SQL 200/s): "
          f"{', '.join(slow) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
