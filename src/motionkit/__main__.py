"""``python -m motionkit`` runs the command-line tool."""

from .cli import main

main()
