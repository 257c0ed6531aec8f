"""The okfx version, in a module of its own so every layer can name it without importing
the package's public face (which imports every layer)."""

__version__ = "0.1.0"
