"""Imports every command module so that its commands attach to the group."""

from __future__ import annotations

from smevals.cli import (  # noqa: F401
    check_cmd,
    diff_cmd,
    forge_cmds,
    grade_cmd,
    init_cmd,
    merge_cmd,
    report_cmd,
    run_cmd,
    site_cmds,
    store_cmds,
    test_cmd,
    validate_cmd,
)
