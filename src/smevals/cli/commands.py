"""Imports every command module so that its commands attach to the group."""

from __future__ import annotations

from smevals.cli import (  # noqa: F401
    build_cmd,
    check_cmd,
    diff_cmd,
    export_cmd,
    gc_cmd,
    grade_cmd,
    import_cmd,
    init_cmd,
    label_cmd,
    log_cmd,
    merge_cmd,
    regrade_cmd,
    report_cmd,
    run_cmd,
    schemas_cmd,
    score_cmd,
    serve_cmd,
    show_cmd,
    test_cmd,
    validate_cmd,
    verify_cmd,
)
