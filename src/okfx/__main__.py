"""``python -m okfx`` runs the command line."""

from okfx.cli import main

main()
