"""Time an index build's own work, without the model: `python bench/build_work.py N [--processes P]`.

A synthetic catalogue of N products (`write_synthetic_shop`, seed 0) is built with a stand-in embedder that returns
random vectors at once, so the figure is everything a build does besides embedding: reading products, chunking,
answer texts, hashing, writing the version, BM25. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt


class InstantEmbedder:
    """Random unit-free vectors, no model: only for timing what a build does besides embedding."""

    name = "instant-bench"
    dimension = 384
    batch_size = 64

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.random.default_rng(len(texts)).standard_normal((len(texts), self.dimension)).astype(np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.embed_documents([text])[0]


def main() -> None:
    from ask_engine.bench.synthetic_shop import write_synthetic_shop
    from ask_engine.config import Settings
    from ask_engine.indexer import build_index

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("products", type=int)
    parser.add_argument("--processes", type=int, help="build_processes (default: the setting's default)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        shop = write_synthetic_shop(Path(tmp) / "shop", args.products, seed=0)
        settings = Settings.load()
        if args.processes:
            settings = settings.model_copy(update={"build_processes": args.processes})
        start = time.perf_counter()
        report = build_index(shop, Path(tmp) / "index", settings, embedder=InstantEmbedder(), progress=False)
        seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "products": args.products,
                "processes": args.processes,
                "passages": report.passages,
                "answer_texts": report.unit_texts,
                "build_seconds": round(seconds, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
