import unittest

from rle import decode, encode


class TestRle(unittest.TestCase):
    def test_encode(self) -> None:
        self.assertEqual(encode("aaabcc"), "3a1b2c")
        self.assertEqual(encode("a"), "1a")
        self.assertEqual(encode(""), "")

    def test_encode_refuses_digits(self) -> None:
        with self.assertRaises(ValueError):
            encode("a1")

    def test_decode(self) -> None:
        self.assertEqual(decode("3a1b2c"), "aaabcc")

    def test_decode_long_runs(self) -> None:
        self.assertEqual(decode("12x"), "x" * 12)
        self.assertEqual(decode(encode("y" * 105)), "y" * 105)

    def test_decode_refuses_bad_codes(self) -> None:
        for bad in ("a", "3", "3a4"):
            with self.assertRaises(ValueError):
                decode(bad)

    def test_round_trip(self) -> None:
        for text in ("hello world", "  ", "zzzzzzzzzzzzzzzzzzzzz!"):
            self.assertEqual(decode(encode(text)), text)
