"""Served UCP REST requests/second: `ask-engine serve` in a subprocess, driven at several concurrency levels."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ask_engine.bench.measure import _log, percentiles

CONCURRENCY = (1, 4, 16)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _drive(
    url: str, headers: dict[str, str], bodies: Sequence[dict[str, Any]], concurrency: int
) -> dict[str, Any]:
    import httpx

    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    latencies: list[float] = []
    statuses: dict[str, int] = defaultdict(int)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=120.0, limits=limits, headers=headers) as client:

        async def worker() -> None:
            while not queue.empty():
                body = queue.get_nowait()
                start = time.perf_counter()
                try:
                    response = await client.post(url, json=body)
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


def bench_server(
    index_dir: Path,
    questions: Sequence[dict[str, Any]],
    *,
    requests: int = 200,
    concurrency: Sequence[int] = CONCURRENCY,
    warmup: int = 8,
    startup_timeout_s: float = 300.0,
) -> dict[str, Any]:
    """Run `ask-engine serve` over `index_dir` in a subprocess and drive `requests` REST asks at each concurrency.

    `questions` must hold warmup + requests × levels requests; each is sent once (in order), so no answer comes from
    a cache the previous level filled.
    """
    import httpx

    from ask_engine.server import discovery

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ)
    # The load comes from one address: lift the per-client limits, which would otherwise measure the limiter.
    env["ASK_ENGINE_RATE_LIMIT_PER_MINUTE"] = str(10**9)
    env["ASK_ENGINE_RATE_LIMIT_PER_HOUR"] = str(10**9)
    env.setdefault("HF_HUB_OFFLINE", "1")
    log_path = index_dir.parent / f"serve-{port}.log"
    cmd = [sys.executable, "-m", "ask_engine.cli", "serve", "--index", str(index_dir), "--host", "127.0.0.1"]
    cmd += ["--port", str(port)]
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + startup_timeout_s
            health: dict[str, Any] = {}
            while True:
                if proc.poll() is not None:
                    tail = log_path.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"ask-engine serve exited with {proc.returncode}:\n{tail}")
                try:
                    response = httpx.get(base + "/healthz", timeout=2.0)
                    if response.status_code == 200:
                        health = response.json()
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"ask-engine serve did not answer /healthz within {startup_timeout_s:.0f} s")
                time.sleep(0.25)
            url = f"{base}{discovery.REST_PATH}/ask"
            headers = {"UCP-Agent": f'profile="{base}{discovery.DEMO_AGENT_PATH}"'}
            asyncio.run(_drive(url, headers, questions[:warmup], 1))
            levels = []
            offset = warmup
            for level in concurrency:
                bodies = questions[offset : offset + requests]
                offset += requests
                levels.append(asyncio.run(_drive(url, headers, bodies, level)))
                _log(f"served at concurrency {level}: {levels[-1]['requests_per_s']} req/s")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    distinct = len({json.dumps(q, sort_keys=True) for q in questions[: warmup + requests * len(concurrency)]})
    return {
        "command": "ask-engine serve (uvicorn, one process), rate limits lifted",
        "health_status": health.get("status"),
        "warmup": warmup,
        "requests_per_level": requests,
        "distinct_questions": distinct,
        "levels": levels,
    }
