"""Codecs that several formats share: XML and MJCF parsing, number tables, joint chains,
pose columns and safe pickles. Nothing here imports a format."""
