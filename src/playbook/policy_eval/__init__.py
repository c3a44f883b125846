"""Measured policy (SPEC §10, issue 18): which policy would have predicted our own feedback best?

`evaluate(store)` replays the store's feedback log in time order and compares candidate
policies on the held-out end of it with paired, session-bootstrap intervals; the verdict
recommends a change only when the primary metric's interval lies above zero, and is
"inert" otherwise. numpy is imported by the functions that need it, never at import time.
"""

from __future__ import annotations

from .candidates import Candidate, CandidateError, candidate, default_grid, load_candidates
from .evaluate import evaluate
from .report import PRIMARY, EvalReport

__all__ = [
    "PRIMARY",
    "Candidate",
    "CandidateError",
    "EvalReport",
    "candidate",
    "default_grid",
    "evaluate",
    "load_candidates",
]
