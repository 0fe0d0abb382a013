"""PARC: MS motion/terrain pickles, legacy pickles, character XML and motion lists.

Pickles are only ever decoded by :mod:`motionkit.formats.shared.pickles.safepickle`, which runs no
code from the file.
"""
