"""Short random ids: `b-7f3a9c2e` for bullets, `p-…` for blocks and proposals, `c-…` for
curate batches."""

from __future__ import annotations

import os


def random_hex(nbytes: int) -> str:
    """Random hex from os.urandom (what `secrets` uses, without importing hmac)."""
    return os.urandom(nbytes).hex()


def new_id(prefix: str) -> str:
    return f"{prefix}-{random_hex(4)}"


def new_batch_id() -> str:
    return f"c-{random_hex(6)}"
