"""sql_execution and sql_valid: the execution-accuracy rules, every refused statement, the
limits, and the database (a file or a .sql script built once into the cache)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from smevals.checkers import CheckInput, run_check

SCRIPT = """
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, city TEXT, score REAL);
INSERT INTO people VALUES (1, 'ann', 'Oslo', 1.5), (2, 'bob', NULL, 2.25),
                          (3, 'cy', 'Oslo', NULL), (4, 'bob', 'Rome', 0.1);
CREATE TABLE pets (owner INTEGER, kind TEXT);
INSERT INTO pets VALUES (1, 'cat'), (1, 'dog'), (4, 'cat');
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    grader = tmp_path / "graders"
    grader.mkdir()
    (grader / "db.sql").write_text(SCRIPT)
    return grader


def check(folder: Path, output: str, name: str = "sql_execution", timeout: float | None = None,
          **opts: Any) -> dict[str, Any]:
    opts.setdefault("database", "db.sql")
    inp = CheckInput(output=output, task={}, usage=None, grader_dir=folder, timeout=timeout)
    return run_check(name, opts, inp).as_dict()


def passes(folder: Path, output: str, **opts: Any) -> bool:
    result = check(folder, output, **opts)
    assert "error" not in result and result.get("score") in (0.0, 1.0), result
    return bool(result["ok"])


# ---- which SQL is run ------------------------------------------------------------------


def test_the_sql_is_the_first_sql_block_else_the_whole_output(folder: Path) -> None:
    ref = "SELECT name FROM people WHERE id = 1"
    assert passes(folder, "SELECT name FROM people WHERE id = 1;;\n", reference=ref)
    assert passes(folder, "Sure:\n```python\nx = 1\n```\n```sql\nSELECT 'ann';\n```\n"
                          "```sql\nSELECT 'bob'\n```\n", reference=ref)
    assert passes(folder, "```\nSELECT 'ann'\n```\n", reference=ref)
    assert check(folder, "```sql\n  ;\n```\n", reference=ref) == {
        "ok": False, "score": 0.0, "notes": "no SQL found in output.txt"}


# ---- the rules of execution accuracy ---------------------------------------------------


ORDERED = "SELECT name FROM people ORDER BY id"
UNORDERED_OUTPUT = "SELECT name FROM people ORDER BY id DESC"


@pytest.mark.parametrize(("reference", "extra", "ok"), [
    (ORDERED, {}, False),                                             # top-level ORDER BY
    ("SELECT name FROM people", {}, True),                            # none: a multiset
    ("SELECT name FROM (SELECT * FROM people ORDER BY id)", {}, True),   # in a subquery
    ("SELECT name FROM people WHERE city <> 'ORDER BY'", {}, True),   # in a string
    ("SELECT name FROM people -- ORDER BY id\n", {}, True),           # in a comment
    ("SELECT name FROM people /* ORDER BY */", {}, True),
    ('SELECT "order by".name FROM people AS "order by"', {}, True),   # a quoted name
    ("SELECT name FROM (SELECT name, row_number() OVER (ORDER BY id) FROM people)", {}, True),
    ("WITH p AS (SELECT name FROM people ORDER BY id) SELECT name FROM p", {}, True),
    ("SELECT name FROM people WHERE id < 3 UNION ALL SELECT name FROM people WHERE id >= 3 "
     "ORDER BY 1", {}, False),                                        # a compound's ORDER BY
    ("SELECT name FROM people", {"ordered": True}, False),            # forced in order
    (ORDERED, {"ordered": False}, True),                              # forced unordered
])
def test_order_matters_only_when_the_reference_orders_at_the_top(
        folder: Path, reference: str, extra: dict[str, Any], ok: bool) -> None:
    output = UNORDERED_OUTPUT
    if "<>" in reference:
        output = "SELECT name FROM people WHERE city = 'Oslo' OR id = 4 ORDER BY id DESC"
    assert passes(folder, output, reference=reference, **extra) is ok


def test_an_ordered_mismatch_shows_the_first_differing_rows(folder: Path) -> None:
    assert check(folder, UNORDERED_OUTPUT, reference=ORDERED) == {
        "ok": False, "score": 0.0,
        "notes": "the rows differ in order or value from row 0 (the reference is ordered)",
        "details": {"ordered": True, "rows": 4, "expected_rows": 4, "first_difference_at": 0,
                    "got": [["bob"], ["cy"], ["bob"], ["ann"]],
                    "expected": [["ann"], ["bob"], ["cy"], ["bob"]]}}


def test_rows_are_a_multiset_duplicates_count(folder: Path) -> None:
    ref = "SELECT name FROM people"
    assert not passes(folder, "SELECT DISTINCT name FROM people", reference=ref)
    result = check(folder, "SELECT name FROM people UNION ALL SELECT 'ann'", reference=ref)
    assert (result["notes"], result["details"]["missing"], result["details"]["unexpected"]) == \
        ("the query returns 5 row(s), expected 4", [], [["ann"]])
    result = check(folder, "SELECT CASE name WHEN 'cy' THEN 'bob' ELSE name END FROM people",
                   reference=ref)
    assert (result["notes"], result["details"]["missing"], result["details"]["unexpected"]) == \
        ("the rows differ from the expected ones", [["cy"]], [["bob"]])


def test_many_differing_rows_are_shown_five_at_most(folder: Path) -> None:
    result = check(folder, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                           "WHERE i < 50) SELECT i FROM n", reference="SELECT id FROM people")
    assert result["details"]["unexpected"] == [[5], [6], [7], [8], [9]]
    assert result["details"]["missing"] == []


def test_nulls_match_nulls_only(folder: Path) -> None:
    assert passes(folder, "SELECT city FROM people", reference="SELECT city FROM people")
    assert not passes(folder, "SELECT ifnull(city, '') FROM people",
                      reference="SELECT city FROM people")
    assert not passes(folder, "SELECT ifnull(score, 0) FROM people",
                      reference="SELECT score FROM people")
    assert passes(folder, "SELECT NULL", expected_rows=[[None]])


def test_numbers_compare_by_value_within_the_tolerance(folder: Path) -> None:
    assert passes(folder, "SELECT 0.1 + 0.2", reference="SELECT 0.3")      # default 1e-9
    assert not passes(folder, "SELECT 0.1 + 0.2", reference="SELECT 0.3", float_tolerance=0)
    assert passes(folder, "SELECT 1.004", reference="SELECT 1.0", float_tolerance=0.01)
    assert not passes(folder, "SELECT 1.02", reference="SELECT 1.0", float_tolerance=0.01)
    assert passes(folder, "SELECT 2", reference="SELECT 2.0", float_tolerance=0)
    assert not passes(folder, "SELECT '2'", reference="SELECT 2")          # text is not a number
    assert not passes(folder, "SELECT 9007199254740993", reference="SELECT 9007199254740992")
    assert passes(folder, "SELECT round(sum(score), 2) FROM people", expected_rows=[3.85])


def test_unordered_rows_pair_up_within_the_tolerance(folder: Path) -> None:
    got = "SELECT 1.0000000001, 'b' UNION ALL SELECT 1.0, 'a'"
    assert passes(folder, got, expected_rows=[[1.0, "b"], [1.0000000001, "a"]],
                  float_tolerance=1e-6)


def test_column_names_are_ignored_unless_match_columns(folder: Path) -> None:
    ref = "SELECT name, city FROM people"
    renamed = "SELECT name AS who, city AS place FROM people"
    assert passes(folder, renamed, reference=ref)
    assert check(folder, renamed, reference=ref, match_columns=True) == {
        "ok": False, "score": 0.0, "notes": "the column names differ (match_columns)",
        "details": {"columns": ["who", "place"], "expected_columns": ["name", "city"]}}
    assert passes(folder, "SELECT NAME, City FROM people", reference=ref, match_columns=True)
    assert check(folder, "SELECT name FROM people", reference=ref)["notes"] == \
        "the query returns 1 column(s), expected 2"


def test_expected_rows_as_lists_values_and_mappings(folder: Path) -> None:
    sql = "SELECT name, city FROM people WHERE id <= 2"
    assert passes(folder, sql, expected_rows=[["bob", None], ["ann", "Oslo"]])
    assert not passes(folder, sql, expected_rows=[["bob", None], ["ann", "Oslo"]], ordered=True)
    assert passes(folder, "SELECT count(*) FROM people", expected_rows=[4])
    assert passes(folder, "SELECT 1 = 1", expected_rows=[[True]])
    rows = [{"name": "ann", "city": "Oslo"}, {"name": "bob", "city": None}]
    assert passes(folder, sql, expected_rows=rows, match_columns=True)
    assert not passes(folder, "SELECT name, city AS town FROM people WHERE id <= 2",
                      expected_rows=rows, match_columns=True)
    assert passes(folder, "SELECT name FROM people WHERE id > 9", expected_rows=[])


def test_expected_rows_of_mixed_shapes_are_an_option_problem(folder: Path) -> None:
    assert check(folder, "SELECT 1", expected_rows=[[1], 2]) == {
        "ok": False, "notes": "option 'expected_rows': give every row in the same form "
                              "(all lists, all mappings or all single values)"}
    assert check(folder, "SELECT 1", expected_rows=[[1], [1, 2]])["notes"] == \
        "option 'expected_rows': every row must have the same number of values"


def test_the_reference_and_the_database_may_come_from_the_task(folder: Path) -> None:
    inp = CheckInput(output="SELECT count(*) FROM pets", usage=None, grader_dir=folder,
                     task={"database": "db.sql", "reference": "SELECT 3"})
    assert run_check("sql_execution", {}, inp).as_dict() == {"ok": True, "score": 1.0}
    inp = CheckInput(output="SELECT 1", usage=None, grader_dir=folder, task={})
    assert run_check("sql_execution", {"database": "db.sql"}, inp).as_dict()["notes"] == (
        "option 'reference': missing option: one of 'reference', 'expected_rows' (and the "
        "Task has no 'reference' or 'expected_rows' key)")


def test_a_failing_reference_is_a_problem_with_the_check(folder: Path) -> None:
    assert check(folder, "SELECT 1", reference="SELECT nope FROM people") == {
        "ok": False, "notes": "the reference query failed: SQLite: no such column: nope"}


# ---- what is refused, never run ---------------------------------------------------------


REFUSED = [
    ("ATTACH DATABASE 'other.db' AS other", "refused: ATTACH is not allowed: the database is "
                                            "read-only"),
    ("PRAGMA query_only = 0", "refused: PRAGMA query_only is not allowed (only schema-reading "
                              "pragmas)"),
    ("PRAGMA journal_mode = DELETE", "refused: PRAGMA journal_mode is not allowed (only "
                                     "schema-reading pragmas)"),
    ("SELECT load_extension('/tmp/evil.so')", "refused: the function load_extension() is not "
                                              "allowed"),
    ("SELECT 1; SELECT 2", "only one SQL statement is allowed"),
    ("SELECT 1; DROP TABLE people", "only one SQL statement is allowed"),
    ("DROP TABLE people", "refused: changing the schema (CREATE, DROP, ALTER) is not allowed: "
                          "the database is read-only"),
    ("CREATE TEMP TABLE t (x)", "refused: changing the schema (CREATE, DROP, ALTER) is not "
                                "allowed: the database is read-only"),
    ("ALTER TABLE people ADD COLUMN x", "refused: ALTER TABLE is not allowed: the database is "
                                        "read-only"),
    ("INSERT INTO people (name) VALUES ('eve')", "refused: INSERT is not allowed: the database "
                                                 "is read-only"),
    ("UPDATE people SET name = 'eve'", "refused: UPDATE is not allowed: the database is "
                                       "read-only"),
    ("DELETE FROM people", "refused: DELETE is not allowed: the database is read-only"),
    ("BEGIN", "refused: TRANSACTION is not allowed: the database is read-only"),
    ("SELECC name FROM people", 'SQLite: near "SELECC": syntax error'),
]


@pytest.mark.parametrize(("sql", "reason"), REFUSED, ids=[s.split()[0] + str(i)
                                                          for i, (s, _) in enumerate(REFUSED)])
def test_refused_statements_fail_with_the_reason(folder: Path, sql: str, reason: str) -> None:
    before = hashlib.sha256((folder / "db.sql").read_bytes()).hexdigest()
    assert check(folder, sql, reference="SELECT 1") == {
        "ok": False, "score": 0.0, "notes": f"the query failed: {reason}",
        "details": {"sql": sql}}
    assert check(folder, sql, name="sql_valid") == {
        "ok": False, "score": 0.0, "notes": f"invalid SQL: {reason}", "details": {"sql": sql}}
    assert hashlib.sha256((folder / "db.sql").read_bytes()).hexdigest() == before
    assert not (folder.parent / "other.db").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["db.sql"]


def test_hostile_text_fails_without_a_crash(folder: Path) -> None:
    cases: list[tuple[str, dict[str, Any]]] = [("sql_execution", {"reference": "SELECT 1"}),
                                               ("sql_valid", {})]
    for name, opts in cases:
        notes = check(folder, "SELECT 1\0; DROP TABLE people", name=name, **opts)["notes"]
        assert notes.endswith("SQLite: the query contains a null character")
        notes = check(folder, "SELECT '\udc80'", name=name, **opts)["notes"]
        assert "the SQL cannot be passed to SQLite: 'utf-8' codec can't encode character " \
               "'\\udc80'" in notes and notes.endswith("surrogates not allowed")


def test_schema_reading_pragmas_and_the_schema_table_are_allowed(folder: Path) -> None:
    assert passes(folder, "PRAGMA table_info(pets)", expected_rows=[
        [0, "owner", "INTEGER", 0, None, 0], [1, "kind", "TEXT", 0, None, 0]])
    assert passes(folder, "SELECT name FROM sqlite_master WHERE type = 'table'",
                  expected_rows=["people", "pets"])


def test_a_query_that_would_run_forever_is_stopped(folder: Path) -> None:
    forever = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
               "SELECT count(*) FROM n")
    assert check(folder, forever, reference="SELECT 1", timeout=0.3)["notes"] == \
        "the query failed: the query ran longer than 0.3 s (stopped)"
    assert check(folder, forever, name="sql_valid", timeout=0.3) == {"ok": True, "score": 1.0}


def test_a_value_of_a_gigabyte_is_refused(folder: Path) -> None:
    assert check(folder, "SELECT length(zeroblob(1000000000))", reference="SELECT 1")[
        "notes"] == "the query failed: SQLite: string or blob too big"


def test_a_query_returning_too_many_rows_is_stopped(folder: Path) -> None:
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n"
    assert check(folder, endless, reference="SELECT 1", max_rows=100)["notes"] == \
        "the query failed: the query returns more than 100 rows (max_rows)"
    assert check(folder, endless, reference="SELECT 1")["notes"] == \
        "the query failed: the query returns more than 10000 rows (max_rows)"


def test_sql_valid_compiles_against_the_schema_without_running(folder: Path) -> None:
    assert check(folder, "```sql\nSELECT name FROM people;\n```", name="sql_valid") == \
        {"ok": True, "score": 1.0}
    assert check(folder, "SELECT age FROM people", name="sql_valid")["notes"] == \
        "invalid SQL: SQLite: no such column: age"
    assert check(folder, "SELECT * FROM nowhere", name="sql_valid")["notes"] == \
        "invalid SQL: SQLite: no such table: nowhere"


# ---- the database --------------------------------------------------------------------


def test_a_database_that_is_not_there_fails_the_check(folder: Path) -> None:
    assert check(folder, "SELECT 1", database="gone.sqlite", reference="SELECT 1") == {
        "ok": False, "notes": "option 'database': no such file: gone.sqlite (relative to the "
                              "grader's folder)"}
    assert check(folder, "SELECT 1", name="sql_valid", database="gone.sql") == {
        "ok": False, "notes": "option 'database': no such file: gone.sql (relative to the "
                              "grader's folder)"}
    (folder / "fake.db").write_text("not a database")
    assert check(folder, "SELECT 1", database="fake.db", reference="SELECT 1")["notes"] == (
        "option 'database': fake.db is not an SQLite database (give an SQLite file, or a .sql "
        "script)")


def test_a_script_that_fails_to_build_fails_the_check(folder: Path) -> None:
    (folder / "broken.sql").write_text("CREATE TABLE a (x);\nINSERT INTO b VALUES (1);\n")
    assert check(folder, "SELECT 1", database="broken.sql", reference="SELECT 1") == {
        "ok": False, "notes": "option 'database': the script broken.sql failed to build: "
                              "no such table: b"}
    (folder / "attach.sql").write_text("ATTACH DATABASE 'x.db' AS x;\n")
    assert check(folder, "SELECT 1", database="attach.sql", reference="SELECT 1")["notes"] == (
        "option 'database': the script attach.sql failed to build: not authorized")
    assert not (folder / "x.db").exists()


def test_a_script_is_built_once_into_the_cache_and_reused(folder: Path, tmp_path: Path) -> None:
    built = tmp_path / "_cache" / "sql" / (
        hashlib.sha256(SCRIPT.lstrip("\n").encode()).hexdigest() + ".sqlite")
    (folder / "db.sql").write_text(SCRIPT.lstrip("\n"))
    assert passes(folder, "SELECT count(*) FROM people", expected_rows=[4])
    assert built.is_file()
    os.utime(built, (1_000_000, 1_000_000))
    assert passes(folder, "SELECT count(*) FROM pets", expected_rows=[3])
    assert built.stat().st_mtime == 1_000_000
    assert [p.name for p in built.parent.iterdir()] == [built.name]


def test_without_the_cache_a_script_is_built_in_a_private_folder(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMEVALS_NO_CACHE", "1")
    assert passes(folder, "SELECT count(*) FROM people", expected_rows=[4])
    assert not (tmp_path / "_cache").exists()


def test_an_sqlite_file_is_read_from_a_private_copy(folder: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(folder / "shop.db")
    conn.executescript(SCRIPT)
    conn.close()
    before = (folder / "shop.db").read_bytes()
    assert passes(folder, "SELECT name FROM people WHERE id = 2", database="shop.db",
                  expected_rows=["bob"])
    assert check(folder, "DELETE FROM people", database="shop.db", reference="SELECT 1")[
        "notes"] == "the query failed: refused: DELETE is not allowed: the database is read-only"
    assert (folder / "shop.db").read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["db.sql", "shop.db"]


def test_without_a_grader_the_path_starts_at_the_current_folder(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import smevals

    monkeypatch.chdir(folder)
    assert smevals.check({"checker": "sql_execution", "database": "db.sql",
                          "reference": "SELECT 4"}, "SELECT count(*) FROM people") == \
        {"ok": True, "score": 1.0}
    assert smevals.check({"checker": "sql_valid", "database": "gone.sql"}, "SELECT 1") == {
        "ok": False, "notes": "option 'database': no such file: gone.sql (relative to the "
                              "current folder)"}


# ---- Spider's and BIRD's rules (tests/checkers/test_sql_agreement.py compares them) ------


def test_columns_in_another_order_match_unless_strict(folder: Path) -> None:
    ref = "SELECT name, city, score FROM people"
    assert passes(folder, "SELECT score, name, city FROM people", reference=ref)
    assert check(folder, "SELECT score, name, city FROM people", reference=ref,
                 columns="strict")["notes"] == "the rows differ from the expected ones"
    assert passes(folder, "SELECT city, name FROM people", expected_rows=[
        ["ann", "Oslo"], ["bob", None], ["cy", "Oslo"], ["bob", "Rome"]])
    assert not passes(folder, "SELECT city, name FROM people", match_columns=True,
                      reference="SELECT city AS name, name AS city FROM people")


def test_hundreds_of_columns_are_searched_without_recursion(folder: Path) -> None:
    values = list(range(300))
    gold = "SELECT " + ", ".join(map(str, values))
    pred = "SELECT " + ", ".join(map(str, reversed(values)))
    assert passes(folder, pred, reference=gold)


def test_a_search_over_too_many_column_orders_stops_and_names_strict(folder: Path) -> None:
    from itertools import permutations

    columns = list(permutations([0.5, 1.5, 2.5, 3.5]))
    gold, pred = (" UNION ALL ".join("SELECT " + ", ".join(str(c[r]) for c in part)
                                     for r in range(4))
                  for part in (columns[:10], columns[10:20]))
    assert check(folder, pred, reference=gold) == {"ok": False, "notes": (
        "too many orders of the 10 columns could match the expected ones (the search stops "
        "after 1,000,000 values compared); give `columns: strict` to compare the columns in "
        "the order the query gives them")}
    assert check(folder, pred, reference=gold, columns="strict")["score"] == 0.0
    assert check(folder, pred, reference=gold, float_tolerance=0)["score"] == 0.0


def test_two_empty_results_match_whatever_their_columns(folder: Path) -> None:
    assert passes(folder, "SELECT name FROM people WHERE 0",
                  reference="SELECT name, city FROM people WHERE 0")
    assert passes(folder, "SELECT name, city FROM people WHERE 0", expected_rows=[])
    assert check(folder, "SELECT name FROM people WHERE 0", reference="SELECT name FROM "
                 "people")["notes"] == "the query returns 0 row(s), expected 4"
    assert check(folder, "SELECT name FROM people WHERE 0", match_columns=True,
                 reference="SELECT city FROM people WHERE 0")["notes"] == \
        "the column names differ (match_columns)"


def test_bird_compares_sets_with_the_columns_in_order(folder: Path) -> None:
    ref = "SELECT name FROM people ORDER BY id"
    assert passes(folder, "SELECT DISTINCT name FROM people ORDER BY name DESC", reference=ref,
                  mode="bird")
    assert check(folder, "SELECT city, name FROM people", mode="bird",
                 reference="SELECT name, city FROM people")["notes"] == \
        "the rows differ from the expected ones (compared as sets)"
    assert passes(folder, "SELECT city, name FROM people", mode="bird", columns="any_order",
                  reference="SELECT name, city FROM people")
    assert check(folder, "SELECT DISTINCT city FROM people", mode="bird",
                 reference="SELECT name FROM people") == {
        "ok": False, "score": 0.0, "notes": "the rows differ from the expected ones "
                                            "(compared as sets)",
        "details": {"rows": 3, "expected_rows": 4, "missing": [["ann"], ["bob"], ["cy"]],
                    "unexpected": [[None], ["Oslo"], ["Rome"]]}}
    assert check(folder, "SELECT name FROM people WHERE 0", mode="bird",
                 reference=ref)["notes"] == "the query returns 0 row(s), expected 4"


def test_the_modes_options_are_checked(folder: Path) -> None:
    assert check(folder, "SELECT 1", reference="SELECT 1", mode="bird", ordered=True) == {
        "ok": False, "notes": "option 'ordered': mode: bird compares the rows as sets, so "
                              "their order cannot count (drop `ordered`, or use mode: spider)"}
    assert check(folder, "SELECT 1", reference="SELECT 1", mode="test-suite")["notes"] == \
        "option 'mode': expected one of 'spider', 'bird', got \"test-suite\""
    assert check(folder, "SELECT 1", reference="SELECT 1", columns="loose")["notes"] == \
        "option 'columns': expected one of 'any_order', 'strict', got \"loose\""


# ---- memory (issue 34, item 5) -------------------------------------------------------------

CTE = ("WITH RECURSIVE r(n, b) AS (SELECT 1, zeroblob(15000000) UNION ALL "
       "SELECT n + 1, zeroblob(15000000) FROM r) ")
LIBRARY_CHECK = """
import json, os, sys
import smevals
os.chdir(sys.argv[1])
result = smevals.check({"checker": sys.argv[2], "database": "db.sql", **json.loads(sys.argv[3])},
                       sys.argv[4])
print(json.dumps(result))
"""


def check_in_a_process(folder: Path, name: str, sql: str, megabytes: str,
                       **opts: Any) -> dict[str, Any]:
    """A Check in a process of its own: SQLite's heap limit holds for a whole process and
    is only ever lowered in it, so a test of a low limit must not lower it for the others."""
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", LIBRARY_CHECK, str(folder), name,
                           json.dumps(opts), sql], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SMEVALS_MAX_SQL_MB": megabytes})
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def test_the_rows_a_query_returns_are_bounded_in_memory(folder: Path) -> None:
    result = check_in_a_process(folder, "sql_execution", CTE + "SELECT n, b FROM r", "64",
                                reference="SELECT 1")
    assert result == {"ok": False, "score": 0.0, "notes": (
        "the query failed: the rows the query returns take more than 64 MB "
        "(SMEVALS_MAX_SQL_MB raises it)"), "details": {"sql": CTE + "SELECT n, b FROM r"}}


def test_what_sqlite_allocates_for_a_query_is_bounded(folder: Path) -> None:
    wide = "SELECT " + ", ".join(["zeroblob(4000000)"] * 20)
    notes = ("the query needs more than 24 MB of memory (SQLite's heap limit; "
             "SMEVALS_MAX_SQL_MB raises it)")
    assert check_in_a_process(folder, "sql_execution", wide, "24", reference="SELECT 1")[
        "notes"] == f"the query failed: {notes}"
    grouped = ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2000) "
               "SELECT count(*) FROM (SELECT DISTINCT randomblob(50000) FROM r)")
    assert check_in_a_process(folder, "sql_execution", grouped, "24", reference="SELECT 1")[
        "notes"] == f"the query failed: {notes}"
    assert check_in_a_process(folder, "sql_valid", wide, "24") == {"ok": True, "score": 1.0}
    assert check_in_a_process(folder, "sql_execution", "SELECT count(*) FROM people", "24",
                              reference="SELECT 4") == {"ok": True, "score": 1.0}


def test_a_malformed_memory_setting_fails_the_check(folder: Path) -> None:
    assert check_in_a_process(folder, "sql_valid", "SELECT 1", "lots") == {
        "ok": False, "notes": "SMEVALS_MAX_SQL_MB: 'lots' is not a size in megabytes "
                              "(a number above 0)"}


def test_pragmas_read_as_tables_are_judged_as_the_pragmas(folder: Path) -> None:
    assert check(folder, "SELECT * FROM pragma_database_list", reference="SELECT 1")[
        "notes"] == ("the query failed: refused: PRAGMA database_list is not allowed (only "
                     "schema-reading pragmas)")
    assert check(folder, "SELECT file FROM pragma_database_list", name="sql_valid")[
        "notes"] == ("invalid SQL: refused: PRAGMA database_list is not allowed (only "
                     "schema-reading pragmas)")
    assert passes(folder, "SELECT name FROM pragma_table_info('pets')",
                  expected_rows=["owner", "kind"])


def test_thousands_of_float_rows_in_another_column_order_pair_up(folder: Path) -> None:
    """The rows left over pair within the tolerance by a walk in order: each against each,
    3,000 rows took hours (pytest's timeout fails a regression)."""
    rows = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) ")
    assert passes(folder, rows + "SELECT i * 0.1 + 1e-12, 'r' || i, i FROM n",
                  reference=rows + "SELECT i, 'r' || i, i * 0.1 FROM n", float_tolerance=1e-9)
    assert check(folder, rows + "SELECT i * 0.1 + 1e-6, 'r' || i, i FROM n",
                 reference=rows + "SELECT i, 'r' || i, i * 0.1 FROM n")["notes"] == \
        "the rows differ from the expected ones"
