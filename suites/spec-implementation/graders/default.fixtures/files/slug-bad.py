def slugify(text: str) -> str:
    return text.lower().replace(" ", "-")
