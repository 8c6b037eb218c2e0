def slugify(text: str) -> str:
    """See SPEC.md."""
    raise NotImplementedError
