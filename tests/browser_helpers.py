"""A real headless browser for the tests: Debian's chromium, driven over the DevTools protocol on a pipe
(`--remote-debugging-pipe`: NUL-separated JSON on file descriptors 3 and 4, no extra package).

`open_page(url)` loads a page and returns its screenshot (PNG bytes) and every console error, uncaught exception
and failed resource load the page caused.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageResult:
    screenshot: bytes
    errors: list[str] = field(default_factory=list)
    title: str = ""


class _Pipe:
    def __init__(self, write_fd: int, read_fd: int) -> None:
        self._write = os.fdopen(write_fd, "wb", buffering=0)
        self._read = os.fdopen(read_fd, "rb", buffering=0)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._write.write(json.dumps(message).encode() + b"\0")
        return self._next

    def _message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = self._read.read(1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        data: dict[str, Any] = json.loads(raw)
        return data

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        wanted = self.send(method, params, session)
        while True:
            message = self._message()
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_for(self, method: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        if any(e.get("method") == method for e in self.events):
            return
        while time.monotonic() < deadline:
            message = self._message()
            self.events.append(message)
            if message.get("method") == method:
                return
        raise TimeoutError(method)

    def close(self) -> None:
        self._write.close()
        self._read.close()


def open_page(url: str, *, width: int = 1200, height: int = 1600, timeout_s: float = 60.0) -> PageResult:
    """Load `url` in headless chromium; the screenshot, and what went wrong in the page's console."""
    binary = chromium_path()
    if binary is None:
        raise FileNotFoundError("chromium is not installed")
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()
    profile = tempfile.mkdtemp(prefix="ask-engine-chromium-")
    args = [
        binary,
        "--headless",
        "--no-sandbox",  # the tests may run as root in a container
        "--disable-gpu",
        "--no-first-run",
        "--remote-debugging-pipe",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        "about:blank",
    ]
    # chromium reads commands on fd 3 and answers on fd 4: a small trampoline moves the pipe ends there (through
    # fds >= 10, so the pipe's own numbers can never collide with 3 and 4), then becomes chromium
    trampoline = (
        "import fcntl, os, sys; "
        "r, w = (fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3]); "
        "os.dup2(r, 3); os.dup2(w, 4); os.execv(sys.argv[3], sys.argv[3:])"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", trampoline, str(to_chrome_r), str(from_chrome_w), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(to_chrome_r, from_chrome_w),
    )
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    pipe = _Pipe(to_chrome_w, from_chrome_r)
    try:
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            pipe.call(f"{domain}.enable", session=session)
        pipe.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        pipe.call("Page.navigate", {"url": url}, session=session)
        pipe.wait_for("Page.loadEventFired", timeout_s)
        title = pipe.call("Runtime.evaluate", {"expression": "document.title", "returnByValue": True}, session=session)
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session=session)
        result = PageResult(base64.b64decode(shot["data"]), _errors(pipe.events), str(title["result"].get("value", "")))
        pipe.call("Browser.close")
        return result
    finally:
        pipe.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        shutil.rmtree(profile, ignore_errors=True)


def _errors(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            out.append("exception: " + str(details.get("exception", {}).get("description") or details.get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
            out.append(
                f"console.{params['type']}: "
                + " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", []))
            )
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            entry = params["entry"]
            out.append(f"log {entry.get('source')}: {entry.get('text')} {entry.get('url', '')}".strip())
    return out
