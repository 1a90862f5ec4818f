"""Served UCP REST requests/second: `ask-engine serve` in a subprocess, driven at several concurrency levels; and
1 or 3 replicas sharing one Redis store, the load spread over them."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ask_engine.bench.measure import _log, percentiles

CONCURRENCY = (1, 4, 16)
REPLICAS = (1, 3)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _drive(
    urls: Sequence[str], headers: dict[str, str], bodies: Sequence[dict[str, Any]], concurrency: int
) -> dict[str, Any]:
    """Send `bodies` with `concurrency` clients, request i to urls[i % len(urls)] (a round-robin balancer)."""
    import httpx

    queue: asyncio.Queue[tuple[int, dict[str, Any]]] = asyncio.Queue()
    for item in enumerate(bodies):
        queue.put_nowait(item)
    latencies: list[float] = []
    statuses: dict[str, int] = defaultdict(int)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=120.0, limits=limits, headers=headers) as client:

        async def worker() -> None:
            while not queue.empty():
                i, body = queue.get_nowait()
                start = time.perf_counter()
                try:
                    response = await client.post(urls[i % len(urls)], json=body)
                    status = str(response.status_code)
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                latencies.append((time.perf_counter() - start) * 1000)
                statuses[status] += 1

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - start
    ok = statuses.get("200", 0)
    return {
        "concurrency": concurrency,
        "requests": len(bodies),
        "ok": ok,
        "statuses": dict(statuses),
        "seconds": round(wall, 3),
        "requests_per_s": round(ok / wall, 2) if wall else None,
        "latency_ms": percentiles(latencies),
    }


@contextmanager
def _servers(
    index_dir: Path,
    count: int,
    *,
    env_extra: dict[str, str] | None = None,
    startup_timeout_s: float = 300.0,
    workers: int = 1,
) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """`count` `ask-engine serve` subprocesses over `index_dir` (started together), each with `workers` worker
    processes; yields (base URL, /healthz) once every worker of every server answers."""
    import httpx

    env = dict(os.environ)
    # The load comes from one address: lift the per-client limits, which would otherwise measure the limiter.
    env["ASK_ENGINE_RATE_LIMIT_PER_MINUTE"] = str(10**9)
    env["ASK_ENGINE_RATE_LIMIT_PER_HOUR"] = str(10**9)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.update(env_extra or {})
    started: list[tuple[subprocess.Popen[bytes], str, Path]] = []
    try:
        for _ in range(count):
            port = _free_port()
            log_path = index_dir.parent / f"serve-{port}.log"
            cmd = [sys.executable, "-m", "ask_engine.cli", "serve", "--index", str(index_dir), "--host", "127.0.0.1"]
            cmd += ["--port", str(port), *(["--workers", str(workers)] if workers > 1 else [])]
            with log_path.open("w") as log:
                proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
            started.append((proc, f"http://127.0.0.1:{port}", log_path))
        deadline = time.monotonic() + startup_timeout_s
        ready: list[tuple[str, dict[str, Any]]] = []
        answered: dict[str, dict[Any, Any]] = {}
        for proc, base, log_path in started:
            while True:
                if proc.poll() is not None:
                    tail = log_path.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"ask-engine serve exited with {proc.returncode}:\n{tail}")
                try:
                    # a new connection each time, so each worker is asked in turn: all have loaded their model
                    response = httpx.get(base + "/healthz", timeout=2.0)
                    if response.status_code == 200:
                        answered.setdefault(base, {})[response.json().get("process")] = response.json()
                        if len(answered[base]) >= workers:
                            ready.append((base, response.json()))
                            break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"ask-engine serve did not answer /healthz within {startup_timeout_s:.0f} s")
                time.sleep(0.25)
        yield ready
    finally:
        for proc, _, _ in started:
            proc.terminate()
        for proc, _, _ in started:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _ask_urls(bases: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    from ask_engine.server import discovery

    urls = [f"{base}{discovery.REST_PATH}/ask" for base in bases]
    return urls, {"UCP-Agent": f'profile="{bases[0]}{discovery.DEMO_AGENT_PATH}"'}


def bench_server(
    index_dir: Path,
    questions: Sequence[dict[str, Any]],
    *,
    requests: int = 200,
    concurrency: Sequence[int] = CONCURRENCY,
    warmup: int = 8,
    startup_timeout_s: float = 300.0,
    workers: int = 1,
    store_url: str | None = None,
) -> dict[str, Any]:
    """Run `ask-engine serve` over `index_dir` in a subprocess and drive `requests` REST asks at each concurrency.

    `questions` must hold warmup + requests × levels requests; each is sent once (in order), so no answer comes from
    a cache the previous level filled. `workers` > 1 runs `serve --workers N`, which needs `store_url` (Redis, under
    a key prefix of this run's own); each worker then gets one embedding thread unless ASK_ENGINE_EMBEDDING_THREADS
    says otherwise.
    """
    env: dict[str, str] = {}
    if workers > 1:
        if not store_url:
            raise ValueError("served figures with several workers need a store_url (Redis)")
        env = {"ASK_ENGINE_STORE_URL": store_url, "ASK_ENGINE_STORE_PREFIX": f"ask-engine-bench:{uuid.uuid4().hex[:8]}"}
    with _servers(index_dir, 1, startup_timeout_s=startup_timeout_s, workers=workers, env_extra=env) as ready:
        (base, health), *_ = ready
        urls, headers = _ask_urls([base])
        asyncio.run(_drive(urls, headers, questions[:warmup], 1))
        levels = []
        offset = warmup
        for level in concurrency:
            bodies = questions[offset : offset + requests]
            offset += requests
            levels.append(asyncio.run(_drive(urls, headers, bodies, level)))
            _log(f"served at concurrency {level}: {levels[-1]['requests_per_s']} req/s")
    distinct = len({json.dumps(q, sort_keys=True) for q in questions[: warmup + requests * len(concurrency)]})
    return {
        "command": f"ask-engine serve{f' --workers {workers}' if workers > 1 else ''} (uvicorn), rate limits lifted",
        "workers": workers,
        "embedding_threads": os.environ.get("ASK_ENGINE_EMBEDDING_THREADS")
        or (str(max(1, (os.cpu_count() or 1) // workers)) if workers > 1 else "torch default"),
        "health_status": health.get("status"),
        "warmup": warmup,
        "requests_per_level": requests,
        "distinct_questions": distinct,
        "levels": levels,
    }


def bench_replicas(
    index_dir: Path,
    questions: Sequence[dict[str, Any]],
    store_url: str,
    *,
    counts: Sequence[int] = REPLICAS,
    requests: int = 120,
    concurrency: int = 8,
    warmup: int = 4,
    startup_timeout_s: float = 300.0,
) -> dict[str, Any]:
    """Served requests/s with 1, 3, … replicas of `ask-engine serve` sharing one Redis (`store_url`), the load spread
    round robin over them, `concurrency` clients; each count under its own key prefix. On one machine the replicas
    share its cores, so the figures say what sharing costs, not what more machines would add.

    `questions` must hold (warmup × count + requests) for each count; each is sent once.
    """
    runs = []
    offset = 0
    for count in counts:
        prefix = f"ask-engine-bench:{uuid.uuid4().hex[:8]}"
        env = {"ASK_ENGINE_STORE_URL": store_url, "ASK_ENGINE_STORE_PREFIX": prefix}
        _log(f"starting {count} replica(s) sharing {store_url}")
        with _servers(index_dir, count, env_extra=env, startup_timeout_s=startup_timeout_s) as ready:
            stores = sorted({shop.get("store", "?") for _, health in ready for shop in health.get("shops", [])})
            urls, headers = _ask_urls([base for base, _ in ready])
            # every replica warmed up (its model's first calls are slow), then the measured round
            asyncio.run(_drive(urls, headers, questions[offset : offset + warmup * count], count))
            offset += warmup * count
            run = asyncio.run(_drive(urls, headers, questions[offset : offset + requests], concurrency))
            offset += requests
        _log(f"{count} replica(s): {run['requests_per_s']} req/s")
        runs.append({"replicas": count, "store": stores, **run})
    return {
        "command": "N × ask-engine serve (uvicorn), one Redis store_url, rate limits lifted, round-robin client",
        "cpu_count": os.cpu_count(),
        "requests_per_run": requests,
        "runs": runs,
    }


def redis_unreachable(url: str) -> str | None:
    """None when a Redis answers at `url`; else why the replica figures are skipped."""
    try:
        import redis
    except ImportError:
        return "redis-py is not installed (pip install 'ask-engine[redis]')"
    client = redis.Redis.from_url(url, socket_connect_timeout=2.0, socket_timeout=2.0)
    try:
        client.ping()
    except redis.RedisError as exc:
        return f"no Redis answers at {url}: {exc}"
    finally:
        client.close()
    return None
