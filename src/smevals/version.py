"""The version of smevals (a leaf module, so any layer can name it)."""

__version__ = "0.1.0"
