"""C3D motion-capture files (markers and analog channels), read by our own bounded parser."""
