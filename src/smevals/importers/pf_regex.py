"""A JavaScript regular expression (`new RegExp(value)`, no flags, as promptfoo's `regex`
assertion builds it) written as an RE2 pattern that matches the same texts.

What differs between the two is written out: `.` (JavaScript: not `\\n`, `\\r`, U+2028,
U+2029), `\\s` (JavaScript's Unicode white space), `$` (the end of the text only), `[]`
and `[^]`, `\\xHH`, `\\uHHHH` (a surrogate pair as its character), `\\cX`, identity escapes,
a `{` that is no quantifier, named groups. What RE2 cannot do (lookaround,
backreferences) raises ValueError naming it. One difference stays: JavaScript counts a
character outside the Basic Multilingual Plane (an emoji) as two, RE2 as one.
"""

from __future__ import annotations

import re

DIGIT, WORD = "0-9", "0-9A-Za-z_"
QUANT = re.compile(r"\{(\d+)(,(\d*))?\}")


def _char(c: str) -> str:
    return f"\\x{{{ord(c):X}}}"


SPACE = ("\\x{9}-\\x{D}\\x{20}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
         "\\x{205F}\\x{3000}\\x{FEFF}")        # JavaScript's \\s
NAMED = {"d": DIGIT, "w": WORD, "s": SPACE}
CONTROL = {"t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}


class _Reader:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos:self.pos + n]

    def take(self, n: int = 1) -> str:
        out = self.text[self.pos:self.pos + n]
        self.pos += n
        return out

    def done(self) -> bool:
        return self.pos >= len(self.text)


def js_to_re2(pattern: str) -> str:
    """The RE2 pattern for a flag-less JavaScript one; ValueError naming what cannot be."""
    r = _Reader(pattern)
    out: list[str] = []
    depth = 0
    while not r.done():
        c = r.take()
        if c == "\\":
            out.append(_escape(r, in_class=False))
        elif c == "[":
            out.append(_klass(r))
        elif c == "(":
            out.append(_group(r))
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise ValueError("an unmatched ')'")
            out.append(")")
        elif c == "{":
            out.append(_brace(r, out))
        else:
            out.append(_plain(c))
    if depth:
        raise ValueError("an unclosed '('")
    return "".join(out)


SINGLE = {".": "[^\\n\\r\\x{2028}\\x{2029}]", "$": "\\z", "}": "\\}", "]": "\\]",
          "^": "^", "|": "|", "*": "*", "+": "+", "?": "?"}


def _plain(c: str) -> str:
    """A character outside a class and escapes: its RE2 meaning, or itself."""
    if c in SINGLE:
        return SINGLE[c]
    return c if c.isalnum() and c.isascii() else _char(c)


def _brace(r: _Reader, out: list[str]) -> str:
    """A `{n}`, `{n,}`, `{n,m}` after an atom is a quantifier; any other `{` is literal."""
    m = QUANT.match(r.text, r.pos - 1)
    if m and out and out[-1] not in ("(", "(?:", "|"):
        r.pos = m.end()
        low, high = int(m.group(1)), m.group(3)
        if low > 1000 or (high and int(high) > 1000):
            raise ValueError("a repetition above {1000} (RE2's limit)")
        return m.group(0)
    return "\\{"


def _group(r: _Reader) -> str:
    if r.peek() != "?":
        return "("
    two = r.peek(3)
    if two.startswith("?:"):
        r.take(2)
        return "(?:"
    if two[:2] in ("?=", "?!") or two in ("?<=", "?<!"):
        raise ValueError("lookaround ((?=, (?!, (?<=, (?<!), which RE2 cannot run")
    m = re.compile(r"\?<([A-Za-z_$][A-Za-z0-9_$]*)>").match(r.text, r.pos)
    if m:
        r.pos = m.end()
        return f"(?P<{m.group(1)}>"
    raise ValueError(f"the group syntax ({r.peek(3)}")


def _escape(r: _Reader, in_class: bool) -> str:
    """One escape after its backslash: an RE2 pattern piece (in a class: class members)."""
    if r.done():
        raise ValueError("a pattern ending in a backslash")
    c = r.take()
    if c.lower() in NAMED:
        members = NAMED[c.lower()]
        if c.isupper():
            if in_class:
                raise ValueError(f"\\{c} inside a character class")
            return f"[^{members}]"
        return members if in_class else f"[{members}]"
    if c in "bB" and not in_class:
        return "\\" + c
    if c == "b":                       # [\b] is a backspace
        return _char("\b")
    if c in CONTROL:
        return _char(CONTROL[c])
    if c.isdigit():
        return _digit_escape(r, c)
    if c == "k" and r.peek() == "<":
        raise ValueError("a backreference (\\k<name>), which RE2 cannot run")
    if c in "xu":
        return _code_escape(r, c)
    if c == "c" and r.peek().isascii() and r.peek().isalpha():
        return _char(chr(ord(r.take()) % 32))
    return _char(c)                    # an identity escape: the character itself


def _digit_escape(r: _Reader, c: str) -> str:
    if c == "0" and not r.peek().isdigit():
        return _char("\0")
    raise ValueError(f"a backreference or octal escape (\\{c}), which RE2 cannot run")


def _code_escape(r: _Reader, c: str) -> str:
    size = 2 if c == "x" else 4
    digits = r.peek(size)
    if len(digits) != size or not all(d in "0123456789abcdefABCDEF" for d in digits):
        return _char(c)                # not an escape: the letter (JavaScript's rule)
    r.take(size)
    code = int(digits, 16)
    if 0xD800 <= code < 0xDC00 and r.peek(2) == "\\u":
        low = r.text[r.pos + 2:r.pos + 6]
        if len(low) == 4 and 0xDC00 <= int(low, 16) < 0xE000:
            r.take(6)
            return _char(chr(0x10000 + ((code - 0xD800) << 10) + int(low, 16) - 0xDC00))
    if 0xD800 <= code < 0xE000:
        raise ValueError("a lone surrogate (\\u" + digits + ")")
    return _char(chr(code))


def _klass(r: _Reader) -> str:
    negate = r.peek() == "^"
    if negate:
        r.take()
    if r.peek() == "]":                # [] never matches, [^] matches any character
        r.take()
        return "(?s:.)" if negate else "[^\\x00-\\x{10FFFF}]"
    members: list[str] = []
    while True:
        if r.done():
            raise ValueError("an unclosed '['")
        c = r.take()
        if c == "]":
            break
        members.append(_escape(r, in_class=True) if c == "\\" else
                       "-" if c == "-" else _char(c))
    body = re.sub(r"\\x\{([0-9A-F]+)\}", _readable, _ranges(members))
    return "[" + ("^" if negate else "") + body + "]"


def _readable(m: re.Match[str]) -> str:
    """An ASCII letter or digit written as itself (the rest stays `\\x{..}`)."""
    c = chr(int(m.group(1), 16))
    return c if c.isascii() and c.isalnum() else m.group(0)


def _ranges(members: list[str]) -> str:
    """Class members, with a `-` between two single characters a range and any other `-`
    a literal one (JavaScript's rule)."""
    out: list[str] = []
    single = re.compile(r"\\x\{[0-9A-F]+\}")
    i = 0
    while i < len(members):
        m = members[i]
        if (m == "-" and out and 0 < i < len(members) - 1 and single.fullmatch(out[-1])
                and single.fullmatch(members[i + 1])):
            if int(out[-1][3:-1], 16) > int(members[i + 1][3:-1], 16):
                raise ValueError("a character class range out of order")
            out[-1] += "-" + members[i + 1]
            i += 2
            continue
        out.append(_char("-") if m == "-" else m)
        i += 1
    return "".join(out)
