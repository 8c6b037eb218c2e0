import unittest

from slug import slugify


class TestSlugify(unittest.TestCase):
    def test_words_and_punctuation(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_runs_of_spaces(self):
        self.assertEqual(slugify("  many   spaces "), "many-spaces")

    def test_accents_are_separators(self):
        self.assertEqual(slugify("Crème brûlée"), "cr-me-br-l-e")

    def test_digits_kept(self):
        self.assertEqual(slugify("ABC 123"), "abc-123")

    def test_no_dash_at_the_ends(self):
        self.assertEqual(slugify("--a--"), "a")

    def test_empty(self):
        self.assertEqual(slugify(""), "")
        self.assertEqual(slugify("!!!"), "")
