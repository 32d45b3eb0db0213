"""The full sweep (SPEC §5.1): the vault is the source of truth, and the sweep makes
everything derived from it agree — the marker, the entity index, required frontmatter,
reciprocal links, learned aliases and the recall index. ``full_sweep`` is the entry
point; ``full`` says what it does step by step, each other module does one step."""

from echo_core.ops.sweep.full import full_sweep
from echo_core.ops.sweep.model import SweepResult

__all__ = ["SweepResult", "full_sweep"]
