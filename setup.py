"""The one compiled part: the pickle pre-scan (see src/motionkit/formats/shared/pickles/pickle_scan.py).

Optional, so that an install without a C compiler still works, on the Python walk.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("motionkit.formats.shared.pickles._pickle_scan",
                             ["src/motionkit/formats/shared/pickles/_pickle_scan.c"], optional=True)])
