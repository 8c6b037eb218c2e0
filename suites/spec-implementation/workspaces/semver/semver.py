def compare(a: str, b: str) -> int:
    """See SPEC.md."""
    raise NotImplementedError
