"""The version, in a module of its own: parts of the package can name it without importing
the package (and so everything it loads).
"""

__version__ = "0.1.0"
