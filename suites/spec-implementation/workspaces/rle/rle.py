def encode(text: str) -> str:
    """See SPEC.md."""
    raise NotImplementedError


def decode(code: str) -> str:
    """See SPEC.md."""
    raise NotImplementedError
