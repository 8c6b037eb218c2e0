def to_roman(n: int) -> str:
    """See SPEC.md."""
    raise NotImplementedError
