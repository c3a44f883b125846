"""index: compute the vectors of semantic recall ahead of time."""

from __future__ import annotations

import sys
import time

import typer

from .common import emit, open_store, set_json
from .registry import app


@app.command()
def index(
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
) -> None:
    """Embed every rule that has no vector yet, for `recall --semantic` (progress on stderr).

    Vectors are kept in the playbook by content and embedder, so each rule is embedded
    once; run this after an import or a large batch so the next semantic recall only reads.
    Vectors an older version kept as float32 are rewritten in the compact form (int8
    counts, a quarter of the size: the same ranking, read faster).
    """
    set_json(json_out)
    from ..retrieval.vectors import HashTrigramEmbedder, MemoryVectors  # lazy: every typer command
    from .interchange import _ProgressBar  # lazy: the cli cycle through `app`

    embedder = HashTrigramEmbedder()  # the embedder of `recall --semantic`
    bar = _ProgressBar("embedding", enabled=sys.stderr.isatty())
    started = time.monotonic()
    with open_store(create=False) as store:
        try:
            counts = MemoryVectors(store, embedder).index(progress=bar)
        finally:
            bar.close()
    seconds = time.monotonic() - started
    n, compacted = counts["embedded"], counts["compacted"]
    rewritten = f"; {compacted} rewritten as int8 counts" if compacted else ""
    emit(
        {"embedder": embedder.id, **counts, "seconds": round(seconds, 3)},
        f"embedded {n} {'rule' if n == 1 else 'rules'} with {embedder.id} in {seconds:.1f} s "
        f"({counts['cached']} vectors kept{rewritten})",
    )
