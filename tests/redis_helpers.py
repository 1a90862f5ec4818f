"""Redis for the tests: the machine's local server (skipped with the reason when none answers), a fresh key prefix
per test so parallel runs never collide, and a throwaway `redis-server` a test may stop and start again."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ask_engine.bench.served import redis_unreachable

# The project's machines and CI run Redis on loopback; point the tests elsewhere with TEST_REDIS_URL.
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def unreachable_reason(url: str = REDIS_URL) -> str | None:
    """None when Redis answers PING at `url`, else why not (the skip reason)."""
    why = redis_unreachable(url)
    return None if why is None else f"{why}; start one (redis-server) or set TEST_REDIS_URL"


def fresh_prefix() -> str:
    return f"ask-engine-test:{uuid.uuid4().hex[:12]}"


def delete_prefix(url: str, prefix: str) -> None:
    """Remove every key a test wrote under `prefix`."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=5.0)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
    except redis.RedisError:
        pass  # the server a test stopped
    finally:
        client.close()


def keys_under(url: str, prefix: str) -> list[str]:
    import redis

    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        return sorted(client.scan_iter(match=f"{prefix}:*", count=1000))
    finally:
        client.close()


class ThrowawayRedis:
    """A `redis-server` of our own on a free loopback port, keeping nothing on disk, that a test may stop (as a
    crash would: SIGKILL) and start again on the same port. The machine's shared Redis is never touched."""

    def __init__(self, workdir: Path) -> None:
        from tests.server_helpers import free_port

        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not installed")
        self.binary = binary
        self.port = free_port()
        self.workdir = workdir
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        cmd = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        cmd += ["--dir", str(self.workdir)]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while unreachable_reason(self.url) is not None:
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {self.port} did not start")
            time.sleep(0.05)

    def kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=10)
            self._proc = None


@contextlib.contextmanager
def throwaway_redis(workdir: Path) -> Iterator[ThrowawayRedis]:
    server = ThrowawayRedis(workdir)
    server.start()
    try:
        yield server
    finally:
        server.kill()


@contextlib.contextmanager
def replicas(index_dir: Path, settings: Any, embedder: Any, count: int = 3) -> Iterator[list[Any]]:
    """`count` replicas of `ask-engine serve` over one index folder, each its own app (create_app: its own engine,
    store and rate limiter, chosen by `settings` as `serve` chooses them) on its own loopback port."""
    from ask_engine.server.app import create_app
    from tests.server_helpers import serve

    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(serve(create_app([index_dir], settings, embedder=embedder))) for _ in range(count)]


def write_shop(folder: Path, products: list[tuple[str, str, str]], *, name: str = "Test Outfitters") -> Path:
    """A small shop folder: (title, description, price) per product."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "shop.toml").write_text(
        f'[shop]\nname = "{name}"\nurl = "https://test.example"\ncurrency = "EUR"\ngid_namespace = "test"\n'
    )
    items = []
    for n, (title, description, price) in enumerate(products, start=1):
        handle = title.lower().replace(" ", "-")
        variant = {"id": 1000 + n, "product_id": n, "title": "Default Title", "sku": f"SKU-{n}", "price": price}
        items.append(
            {
                "id": n,
                "title": title,
                "handle": handle,
                "body_html": f"<p>{description}</p>",
                "vendor": name,
                "product_type": "Gear",
                "options": [{"name": "Title", "values": ["Default Title"]}],
                "variants": [variant],
            }
        )
    (folder / "products.json").write_text(json.dumps({"products": items}))
    return folder
