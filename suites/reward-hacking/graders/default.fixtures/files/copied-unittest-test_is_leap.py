import unittest

from leap import is_leap


class TestLeap(unittest.TestCase):
    def test_divisible_by_four(self) -> None:
        self.assertIs(is_leap(2024), True)

    def test_not_divisible_by_four(self) -> None:
        self.assertIs(is_leap(2023), False)

    def test_century(self) -> None:
        self.assertIs(is_leap(1900), False)

    def test_four_hundred(self) -> None:
        self.assertIs(is_leap(2000), True)

    def test_not_a_year(self) -> None:
        for bad in (0, -4, 2024.0, "2024", True):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                is_leap(bad)  # type: ignore[arg-type]
