"""Data files of the site: small JavaScript files that assign one JSON document to a global.

`fetch` of local files is blocked under file:// in Chromium, but <script src> is not, and a
script from the site's own folder is allowed by the strict Content Security Policy of
`serve` (`script-src 'self'`). So every page's data is a file like

    (window.SMEVALS_DATA = window.SMEVALS_DATA || {})["haiku/index"] = {...};

loaded on demand by app.js. JSON is valid JavaScript, and the file is never inlined into
HTML, so untrusted text in it cannot end a script element.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

HEAD = "(window.SMEVALS_DATA = window.SMEVALS_DATA || {})["
_DOC = re.compile(r'^\(window\.SMEVALS_DATA = window\.SMEVALS_DATA \|\| \{\}\)\[("[^"\n]*")\] = '
                  r"(.*);\n?$", re.DOTALL)


def encode(key: str, doc: object) -> bytes:
    """The JavaScript file assigning `doc` to SMEVALS_DATA[key]."""
    body = orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS)
    return HEAD.encode() + orjson.dumps(key) + b"] = " + body + b";\n"


def decode(data: bytes) -> tuple[str, Any]:
    """(key, doc) of a file written by `encode`; ValueError for anything else."""
    match = _DOC.match(data.decode("utf-8"))
    if match is None:
        raise ValueError("not a smevals site data file")
    return orjson.loads(match.group(1)), orjson.loads(match.group(2))
