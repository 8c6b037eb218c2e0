import unittest

from roman import to_roman


class TestToRoman(unittest.TestCase):
    def test_small(self) -> None:
        self.assertEqual([to_roman(n) for n in (1, 2, 3, 5, 10)], ["I", "II", "III", "V", "X"])

    def test_subtractive(self) -> None:
        self.assertEqual([to_roman(n) for n in (4, 9, 40, 90, 400, 900)],
                         ["IV", "IX", "XL", "XC", "CD", "CM"])

    def test_years(self) -> None:
        self.assertEqual(to_roman(1994), "MCMXCIV")
        self.assertEqual(to_roman(2024), "MMXXIV")

    def test_largest(self) -> None:
        self.assertEqual(to_roman(3999), "MMMCMXCIX")

    def test_out_of_range(self) -> None:
        for bad in (0, -1, 4000):
            with self.assertRaises(ValueError):
                to_roman(bad)

    def test_not_an_integer(self) -> None:
        for bad in (2.5, "7"):
            with self.assertRaises(ValueError):
                to_roman(bad)  # type: ignore[arg-type]
