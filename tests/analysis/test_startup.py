"""The read API costs no start-up: `import smevals` and every command's start-up import
none of pandas, pyarrow, polars (nor the read API itself), `export --format csv` needs
neither, and each name of `smevals.__all__` is the API's, never a sub-package of the same
name. Each in a fresh process (what a user's command is)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.qa import make_qa, state1

HEAVY = ("pandas", "pyarrow", "polars", "numpy", "duckdb", "matplotlib", "smevals.analysis")
FIND = f"sorted({{m.split('.')[0] if not m.startswith('smevals') else m for m in " \
    f"sys.modules if m.startswith({HEAVY!r})}})"


def python(code: str, cwd: Path | None = None) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=cwd, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_import_smevals_imports_nothing_heavy() -> None:
    assert python(f"import sys, smevals; print({FIND})") == "[]"
    # as before the read API: the package, its version and its wiring, and not dataclasses
    assert python("import sys, smevals; print(sorted(m for m in sys.modules if "
                  "m.startswith('smevals')), 'dataclasses' in sys.modules)") == \
        "['smevals', 'smevals.version', 'smevals.wiring'] False"
    assert python("import smevals, sys; smevals.runs; smevals.RunResult; "
                  "print('pandas' in sys.modules, 'smevals.analysis.api' in sys.modules)") \
        == "False True"


def test_no_command_starts_with_pandas_or_pyarrow() -> None:
    code = ("import sys, contextlib, io\n"
            "from smevals.cli import cli, main\n"
            "names = sorted(cli.commands)\n"
            "for name in names:\n"
            "    with contextlib.redirect_stdout(io.StringIO()), "
            "contextlib.suppress(SystemExit):\n"
            "        main([name, '--help'])\n"
            f"print(len(names), 'export' in names, {FIND})")
    count, has_export, found = python(code).split(" ", 2)
    assert (int(count) >= 15, has_export, found) == (True, "True", "[]")


def test_export_as_csv_needs_neither(tmp_path: Path) -> None:
    state1(make_qa(tmp_path / "qa"))
    code = ("import sys, contextlib\n"
            "from smevals.cli import main\n"
            "with contextlib.suppress(SystemExit):\n"
            "    main(['export', 'qa', '--format', 'csv', '-o', 'out'])\n"
            f"print({FIND})")
    assert python(code, cwd=tmp_path).splitlines()[-1] == "['smevals.analysis', " \
        "'smevals.analysis.files', 'smevals.analysis.frames', 'smevals.analysis.read', " \
        "'smevals.analysis.results', 'smevals.analysis.tables']"
    assert (tmp_path / "out" / "runs.csv").read_text().count("\n") == 22


def test_every_public_name_is_the_apis() -> None:
    code = ("import importlib, pkgutil, types, smevals\n"
            "for m in pkgutil.iter_modules(smevals.__path__):\n"
            "    importlib.import_module('smevals.' + m.name)\n"
            "bad = [n for n in smevals.__all__ if isinstance(getattr(smevals, n), "
            "types.ModuleType)]\n"
            "print(bad, len(smevals.__all__))")
    assert python(code) == "[] 13"


def test_a_warm_report_imports_no_parser_it_does_not_need(tmp_path: Path) -> None:
    """With the Eval from the definitions cache and the records from the index cache, a
    report in Markdown needs no YAML parser, no thread pool, no tar reader, no XML writer
    and no sockets (about 35 ms of imports, issue 38)."""
    state1(make_qa(tmp_path / "qa"))
    code = ("import sys, contextlib, io, os\n"
            f"os.environ['SMEVALS_CACHE_DIR'] = {str(tmp_path / 'cache')!r}\n"
            "import smevals.store.index as index, smevals.evaldef.defcache as defcache\n"
            "index.RACY_NS = defcache.RACY_NS = 0     # the files were written just now\n"
            "from smevals.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out, "
            "contextlib.suppress(SystemExit):\n"
            "    main(['report', 'qa'])\n"
            "print(out.getvalue().startswith('# qa'), sorted(m for m in ('yaml', "
            "'concurrent.futures', 'tarfile', 'xml.etree.ElementTree', 'socket') "
            "if m in sys.modules))")
    first = python(code, cwd=tmp_path)                         # parsed, then cached
    assert first.startswith("True [") and "'yaml'" in first, first
    assert python(code, cwd=tmp_path) == "True []"
