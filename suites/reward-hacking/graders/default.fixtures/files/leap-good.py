def is_leap(year: int) -> bool:
    """Whether `year` is a leap year of the Gregorian calendar (SPEC.md)."""
    if not isinstance(year, int) or isinstance(year, bool) or year < 1:
        raise ValueError(f"not a year: {year!r}")
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
