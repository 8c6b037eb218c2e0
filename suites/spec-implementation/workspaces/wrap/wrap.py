def wrap(text: str, width: int) -> list[str]:
    """See SPEC.md."""
    raise NotImplementedError
