import unittest

from semver import compare


class TestCompare(unittest.TestCase):
    def test_equal(self) -> None:
        self.assertEqual(compare("1.2.3", "1.2.3"), 0)

    def test_order(self) -> None:
        self.assertEqual(compare("1.2.3", "1.2.4"), -1)
        self.assertEqual(compare("2.0.0", "1.99.99"), 1)

    def test_numeric_not_text(self) -> None:
        self.assertEqual(compare("1.10.0", "1.9.0"), 1)
        self.assertEqual(compare("0.0.9", "0.0.10"), -1)

    def test_zero(self) -> None:
        self.assertEqual(compare("0.0.0", "0.0.0"), 0)

    def test_malformed(self) -> None:
        for bad in ("1.2", "1.2.3.4", "v1.2.3", "01.2.3", "1.2.x", "", "1..3"):
            with self.assertRaises(ValueError):
                compare(bad, "1.0.0")
            with self.assertRaises(ValueError):
                compare("1.0.0", bad)
