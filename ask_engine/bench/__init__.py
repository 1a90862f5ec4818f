"""Benchmarks (`make bench`, `python -m ask_engine.bench`) and the synthetic shops they run on.

- `benchmark`: the run, its tables and the command line
- `latency`: warm `ask` latency beside the raw query embedding; load-test questions
- `indexing`: build throughput against raw encoding, incremental reindex, one catalogue size per process
- `served`: served UCP REST requests/second at several concurrency levels, and with 1 or 3 replicas sharing Redis
- `question_log`: warm `ask` latency with and without the merchant's question log, paired
- `peer`: a LlamaIndex `VectorStoreIndex` over the same passages and model, retrieval only (the `bench` extra)
- `measure`: percentiles, memory, the machine
- `synthetic_shop`, `catalogue`: deterministic Shopify-shaped shop folders of any size
"""

from ask_engine.bench.benchmark import DEFAULT_SIZES, SAMPLE_SHOP, main, print_tables, run_benchmark
from ask_engine.bench.catalogue import CATEGORIES, Category
from ask_engine.bench.indexing import bench_indexing, bench_size
from ask_engine.bench.latency import SAMPLE_QUESTIONS, bench_ask, product_questions, touch_products
from ask_engine.bench.measure import machine_info, percentiles
from ask_engine.bench.peer import bench_peer, peer_unavailable
from ask_engine.bench.question_log import bench_question_log
from ask_engine.bench.served import bench_replicas, bench_server
from ask_engine.bench.synthetic_shop import synthetic_product, synthetic_questions, write_synthetic_shop

__all__ = [
    "CATEGORIES",
    "DEFAULT_SIZES",
    "SAMPLE_QUESTIONS",
    "SAMPLE_SHOP",
    "Category",
    "bench_ask",
    "bench_indexing",
    "bench_peer",
    "bench_question_log",
    "bench_replicas",
    "bench_server",
    "bench_size",
    "machine_info",
    "main",
    "peer_unavailable",
    "percentiles",
    "print_tables",
    "product_questions",
    "run_benchmark",
    "synthetic_product",
    "synthetic_questions",
    "touch_products",
    "write_synthetic_shop",
]
