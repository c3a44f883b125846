"""The deterministic curator of SPEC §5: `curate(store, deltas, provenance, actor)`.

No model is involved. The whole batch is one transaction; invalid items are reported in
`result.rejected`, never raised; every decision is written to the decision log.

- `results`: what a batch reports (`CurateResult`, one `DeltaOutcome` per delta);
- `matching`: blocked patterns and near-duplicates (steps 2-3);
- `pipeline`: the order of the steps, `curate`;
- `batch`: the state of one batch and its steps 2-4 (adds, feedback, structure);
- `lifecycle`: inversion and the maturity pass (steps 5-6), also run by outcomes and imports.
"""

from __future__ import annotations

from .lifecycle import invert_harmed, rerate, run_maturity_pass
from .matching import blocking_pattern, similar_bullets
from .pipeline import curate
from .results import STATUSES, CurateResult, DeltaOutcome

__all__ = [
    "STATUSES",
    "CurateResult",
    "DeltaOutcome",
    "blocking_pattern",
    "curate",
    "invert_harmed",
    "rerate",
    "run_maturity_pass",
    "similar_bullets",
]
