"""A hostile Eval: its runner prints script tags and leaves an SVG with an onload handler,
an HTML page, a binary, a PNG and a symlink to /etc/passwd; its checker writes hostile
notes, tags, details and an SVG of its own. Nothing of it may run in the site."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import make_eval

RUNNER = r"""#!/bin/sh
printf '%s\n' '<script>window.PWNED = "output"; alert("output")</script>'
printf '%s\n' '<img src=x onerror="window.PWNED = 1">'
printf '%s\n' "$SMEVALS_PROMPT"
cat > evil.svg <<'EOF'
<svg xmlns="http://www.w3.org/2000/svg" width="60" height="60"
     onload="window.PWNED='svg';alert('svg')">
<script>window.PWNED = 'svg-script'; alert('svg-script')</script>
<rect width="60" height="60" fill="tomato"/></svg>
EOF
printf '<html><body><script>alert("html")</script></body></html>\n' > page.html
printf '\000\001\002\003binary' > blob.bin
printf '%s%s' 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE' \
    'hQGAhKmMIQAAAABJRU5ErkJggg==' | base64 -d > dot.png
ln -s /etc/passwd secret
"""

CHECKER = r"""#!/bin/sh
cat > made.svg <<'EOF'
<svg xmlns="http://www.w3.org/2000/svg" width="30" height="30"
     onload="window.PWNED='grade';alert('grade')">
<circle cx="15" cy="15" r="12" fill="teal"/></svg>
EOF
printf '%s' '{"score": 0.5, "tags": ["xss"], "notes": "<img src=x onerror=\"window.PWNED=4\">",'
printf '%s\n' ' "details": {"html": "<script>window.PWNED=5</script>"}}'
"""

GRADER = """
checks:
  - checker: ./evil-check
    creates: made.svg
  - checker: contains
    value: "<script>"
"""

MODEL = "<i>evil</i>"
OUTPUT_MARK = '<script>window.PWNED = "output"; alert("output")</script>'


def make_hostile(root: Path) -> Path:
    ev = make_eval(root, name="hostile",
                   tasks={"attack": "prompt: \"<script>window.PWNED='prompt'</script> Say hi\"\n"},
                   configs={"default": "runner: ./evil.sh\nmodel: m1\n"},
                   graders={"default": GRADER},
                   files={"configs/evil.sh": RUNNER, "graders/evil-check": CHECKER})
    (ev / "eval.yaml").write_text('name: hostile\ndescription: "<img src=x onerror=alert(9)>"\n')
    return ev
