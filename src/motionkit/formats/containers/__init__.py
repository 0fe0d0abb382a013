"""Character-motion containers of humanoid training stacks: AMASS, Isaac Lab AMP,
BeyondMimic/mjlab ``.npz`` and the G1 CSV dialects (one module each)."""
