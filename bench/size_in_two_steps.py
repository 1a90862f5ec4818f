"""One synthetic catalogue size (`ask_engine.bench.indexing.bench_size`'s steps) in two processes, for a machine
whose commands may run 10 minutes each (the lent GPU machine of bench/README.md, 2026-12-04):

    python bench/size_in_two_steps.py build N WORK OUT   # generate N products, full build -> OUT/build.json
    python bench/size_in_two_steps.py rest N WORK OUT    # open, ask 30 questions, 1% reindex -> OUT/rest.json

Settings come from the environment as usual (ASK_ENGINE_EMBEDDER, ASK_ENGINE_EMBEDDING_DEVICE=cuda, ...). Each step
also appends its progress to $OUT/log.txt (or /tmp/log.txt), so a step stopped by a time limit leaves its timings.
"""

import json
import os
import resource
import sys
import time
from pathlib import Path

T0 = time.perf_counter()


def log(msg: str) -> None:
    line = f"[{time.perf_counter() - T0:7.1f}s] {msg}"
    print(line, file=sys.stderr, flush=True)
    with open(os.path.join(os.environ.get("OUT", "/tmp"), "log.txt"), "a") as fh:
        fh.write(line + "\n")


def rss() -> dict:
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"peak_rss_mb": round(me, 1), "peak_rss_children_mb": round(kids, 1)}


def main() -> None:
    from ask_engine.bench.latency import _embedder, _opened, bench_ask, touch_products
    from ask_engine.bench.measure import _folder_mb
    from ask_engine.bench.synthetic_shop import synthetic_questions, write_synthetic_shop
    from ask_engine.config import Settings
    from ask_engine.indexer import build_index

    step, out = sys.argv[1], Path(sys.argv[-1])
    settings = Settings.load()
    log(
        f"settings: embedder={settings.embedder} device={settings.embedding_device} "
        f"build_processes={settings.build_processes} cpus={os.cpu_count()}"
    )
    embedder = _embedder(settings)
    result: dict = {"step": step, "load_average_start": os.getloadavg()}
    if step == "build":
        n, work = int(sys.argv[2]), Path(sys.argv[3])
        start = time.perf_counter()
        shop = write_synthetic_shop(work / "shop", n, seed=0)
        result["generate_seconds"] = round(time.perf_counter() - start, 1)
        log(f"generated {n} products in {result['generate_seconds']} s")
        report = build_index(shop, work / "index", settings, embedder=embedder, progress=False)
        log(f"built {report.passages} passages, {report.unit_texts} answer texts in {report.seconds:.1f} s")
        result.update(
            products=n,
            documents=report.documents,
            passages=report.passages,
            unit_texts=report.unit_texts,
            embedded_texts=report.embedded_texts,
            build_seconds=round(report.seconds, 1),
            embed_seconds=round(report.embed_seconds or 0, 1),
            model_seconds=round(report.model_seconds or 0, 1),
            index_mb=_folder_mb(report.path),
            products_json_mb=round((shop / "products.json").stat().st_size / 1e6, 1),
        )
    else:
        n, work = int(sys.argv[2]), Path(sys.argv[3])
        start = time.perf_counter()
        with _opened(work / "index", embedder, settings) as engine:
            result["open_seconds"] = round(time.perf_counter() - start, 1)
            log(f"opened in {result['open_seconds']} s")
            asks = synthetic_questions(n, seed=0, count=30)
            ask = bench_ask(engine, embedder, asks, rounds=1, warmup=5)
            result.update(
                {
                    k: ask.get(k)
                    for k in (
                        "ask_ms",
                        "embed_query_ms",
                        "ask_over_embed_p50",
                        "stages_p50_ms",
                        "texts_embedded_per_ask",
                    )
                }
            )
            log(f"asked: {ask.get('ask_ms')}")
        changed = touch_products(work / "shop", 0.01)
        incremental = build_index(work / "shop", work / "index", settings, embedder=embedder, progress=False)
        log(f"1% reindex: {changed} products, {incremental.seconds:.1f} s")
        result.update(
            incremental_changed_products=changed,
            incremental_seconds=round(incremental.seconds, 1),
            incremental_embedded_passages=incremental.embedded_passages,
            incremental_embedded_units=incremental.embedded_units,
            incremental_text_documents=incremental.text_documents,
        )
    result.update(rss())
    result["load_average_end"] = os.getloadavg()
    (out / f"{step}.json").write_text(json.dumps(result, indent=1))
    log(json.dumps(result))


if __name__ == "__main__":
    main()
