import unittest

from wrap import wrap


class TestWrap(unittest.TestCase):
    def test_example(self) -> None:
        self.assertEqual(wrap("the quick brown fox", 10), ["the quick", "brown fox"])

    def test_exact_fit(self) -> None:
        self.assertEqual(wrap("aaaa bbbb", 9), ["aaaa bbbb"])

    def test_long_word_alone(self) -> None:
        self.assertEqual(wrap("a extraordinarily b", 5), ["a", "extraordinarily", "b"])

    def test_whitespace(self) -> None:
        self.assertEqual(wrap("  one\ttwo\n three  ", 7), ["one two", "three"])

    def test_empty(self) -> None:
        self.assertEqual(wrap("", 4), [])
        self.assertEqual(wrap("   ", 4), [])

    def test_bad_width(self) -> None:
        with self.assertRaises(ValueError):
            wrap("a b", 0)
