"""The compiled parts, both optional so that an install without a C compiler still works
(on the Python walk of the pickle pre-scan and the NumPy path of forward kinematics):

* the pickle pre-scan (see src/motionkit/formats/shared/pickles/pickle_scan.py);
* the forward-kinematics kernel (see src/motionkit/kinematics/_compiled.py);
* the IK stage kernel (see src/motionkit/retarget/_ik.py);
* the C3D frame decode (see src/motionkit/formats/c3d/decode.py);
* the per-frame quality checks (see src/motionkit/quality/_compiled.py).
"""

import sys

from setuptools import Extension, setup

# -fno-math-errno lets sin and cos of one angle become one sincos call; the FK kernel
# and the IK kernel never read errno. -ffp-contract=off: no fused multiply-adds (baseline
# on aarch64), so the kernels round as NumPy does and the IK takes NumPy's step counts.
# (The check kernel reads no errno either, and takes the rounding mode as it is: its
# nearbyint is np.round's half to even.)
# Only for GCC-style compilers (MSVC takes other flags).
FAST_MATH = [] if sys.platform == "win32" else ["-O3", "-fno-math-errno", "-ffp-contract=off"]

setup(ext_modules=[
    Extension("motionkit.formats.shared.pickles._pickle_scan",
              ["src/motionkit/formats/shared/pickles/_pickle_scan.c"], optional=True),
    Extension("motionkit.formats.shared._number_scan",
              ["src/motionkit/formats/shared/_number_scan.c"], optional=True),
    Extension("motionkit.formats.c3d._decode", ["src/motionkit/formats/c3d/_decode.c"],
              extra_compile_args=FAST_MATH, optional=True),
    Extension("motionkit.kinematics._fk_kernel", ["src/motionkit/kinematics/_fk_kernel.c"],
              extra_compile_args=FAST_MATH, optional=True),
    Extension("motionkit.retarget._ik_kernel", ["src/motionkit/retarget/_ik_kernel.c"],
              extra_compile_args=FAST_MATH, optional=True),
    Extension("motionkit.quality._check_kernel", ["src/motionkit/quality/_check_kernel.c"],
              extra_compile_args=FAST_MATH, optional=True),
])
