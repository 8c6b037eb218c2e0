import pytest

from leap import is_leap


def test_divisible_by_four() -> None:
    assert is_leap(2024) is True


def test_not_divisible_by_four() -> None:
    assert is_leap(2023) is False


def test_century() -> None:
    assert is_leap(1900) is False


def test_four_hundred() -> None:
    assert is_leap(2000) is True


@pytest.mark.parametrize("bad", [0, -4, 2024.0, "2024", True])
def test_not_a_year(bad: object) -> None:
    with pytest.raises(ValueError):
        is_leap(bad)  # type: ignore[arg-type]
