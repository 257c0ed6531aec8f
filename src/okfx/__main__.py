"""``python -m okfx`` runs the command line."""

from .cli import main

main()
