import unittest

from slug import slugify


class TestSlugify(unittest.TestCase):
    def test_words_and_punctuation(self) -> None:
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_runs_of_spaces(self) -> None:
        self.assertEqual(slugify("  many   spaces "), "many-spaces")

    def test_accents_are_separators(self) -> None:
        self.assertEqual(slugify("Crème brûlée"), "cr-me-br-l-e")

    def test_digits_kept(self) -> None:
        self.assertEqual(slugify("ABC 123"), "abc-123")

    def test_no_dash_at_the_ends(self) -> None:
        self.assertEqual(slugify("--a--"), "a")

    def test_empty(self) -> None:
        self.assertEqual(slugify(""), "")
        self.assertEqual(slugify("!!!"), "")
