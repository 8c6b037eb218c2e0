import re


def slugify(text: str) -> str:
    """Lower case; each run of non-alphanumeric ASCII becomes one dash; none at the ends."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
