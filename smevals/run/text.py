"""Text that runners and checkers print is stored as UTF-8 with LF newlines."""

from __future__ import annotations


def normalise(data: bytes) -> tuple[str, bool]:
    """(text, whether undecodable bytes were replaced) with CRLF and CR turned into LF."""
    try:
        text = data.decode("utf-8")
        replaced = False
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        replaced = True
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, replaced
