"""Imports every command module so that its commands attach to the group."""

from __future__ import annotations

from smevals.cli import (  # noqa: F401
    cases_cmd,
    check_cmd,
    diff_cmd,
    export_cmd,
    grade_cmd,
    import_cmd,
    init_cmd,
    log_cmd,
    merge_cmd,
    report_cmd,
    run_cmd,
    site_cmd,
    store_cmd,
    test_cmd,
    validate_cmd,
)
