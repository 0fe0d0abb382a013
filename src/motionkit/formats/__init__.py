"""File formats, one package per ecosystem; see registry.py."""
