"""MimicKit: its motion pickles (:mod:`.motion`) and the GMR robot motions it ingests
(:mod:`.gmr`).

Both are plain pickled dicts decoded only through :mod:`motionkit.formats.shared.pickles.safepickle`;
characters are MJCF files read by :mod:`motionkit.formats.parc.character`.
"""
