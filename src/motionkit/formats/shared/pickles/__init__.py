"""Pickles without pickle.load: a pre-scan of the opcode stream, a safe unpickler and a writer."""
