"""`ask-engine serve --workers N`: N processes answering on one port, sharing Redis and the memory-mapped index;
bad values and a worker that cannot start are clear errors, never a server half up."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ask_engine.cli import main
from tests.server_helpers import free_port


def _serve(index: Path, port: int, *args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "ask_engine.cli", "serve", "--index", str(index), "--port", str(port), *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, **env})


@pytest.fixture
def two_workers(sample_index: Path, redis_url: str, redis_prefix: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    env = {"ASK_ENGINE_STORE_URL": redis_url, "ASK_ENGINE_STORE_PREFIX": redis_prefix}
    proc = _serve(sample_index, port, "--workers", "2", env=env)
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_two_workers_answer_on_one_port(two_workers: tuple[str, subprocess.Popen[bytes]]) -> None:
    base, proc = two_workers
    processes: set[str] = set()
    deadline = time.monotonic() + 600
    while len(processes) < 2 and time.monotonic() < deadline:  # a new connection each time: either worker may take it
        assert proc.poll() is None, (proc.stdout.read() if proc.stdout else b"").decode(errors="replace")[-3000:]
        try:
            health = httpx.get(base + "/healthz", timeout=5)
            if health.status_code == 200:
                processes.add(health.json()["process"])
        except httpx.HTTPError:
            time.sleep(0.5)
    assert len(processes) == 2, f"only worker process(es) {processes} answered"
    # opaque ids, not the operating system's process ids (a public endpoint has no reason to tell them)
    assert all(re.fullmatch(r"[0-9a-f]{12}", p) for p in processes), processes
    agent = {"UCP-Agent": f'profile="{base}/.well-known/ucp-demo-agent.json"'}  # the demo profile, served here
    for query in ("Do you ship to Norway?", "Is the Tarn Wellington Boot waterproof?"):
        response = httpx.post(base + "/api/ucp/v1/ask", json={"query": query}, headers=agent, timeout=120)
        assert response.status_code == 200
        assert response.json()["answer"]["plain"]


@pytest.mark.parametrize(("value", "complaint"), [("0", "at least 1"), ("two", "whole number"), ("-3", "at least 1")])
def test_a_bad_worker_count_is_a_usage_error(
    sample_index: Path, capsys: pytest.CaptureFixture[str], value: str, complaint: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--index", str(sample_index), "--workers", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--workers" in err and complaint in err


def test_too_many_workers_is_a_settings_error(sample_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--index", str(sample_index), "--workers", "65"]) == 2
    assert "workers" in capsys.readouterr().err


def test_several_workers_without_redis_are_refused_before_anything_starts(
    sample_index: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASK_ENGINE_STORE_URL", raising=False)
    code = main(["serve", "--index", str(sample_index), "--port", str(free_port()), "--workers", "2"])
    captured = capsys.readouterr()
    assert code == 2
    assert "needs store_url" in captured.err and "rate limits" in captured.err
    assert captured.out == ""  # no banner: nothing was started


def test_a_missing_index_fails_in_the_supervisor_before_any_worker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASK_ENGINE_STORE_URL", "redis://127.0.0.1:6379/0")
    code = main(["serve", "--index", str(tmp_path / "none"), "--port", str(free_port()), "--workers", "2"])
    captured = capsys.readouterr()
    assert code == 2
    assert "no index" in captured.err and captured.out == ""


def test_a_worker_that_cannot_open_the_index_stops_the_server_with_its_error(
    sample_index: Path, tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    broken = tmp_path / "broken-shop"
    shutil.copytree(sample_index, broken)
    version = broken / "versions" / (broken / "CURRENT").read_text().strip()
    (version / "passages.jsonl").unlink()  # CURRENT still names the version: only opening it finds the damage
    env = {"ASK_ENGINE_STORE_URL": redis_url, "ASK_ENGINE_STORE_PREFIX": redis_prefix}
    proc = _serve(broken, free_port(), "--workers", "2", env=env)
    try:
        out, _ = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = out.decode(errors="replace")
    assert proc.returncode == 2, text[-3000:]
    assert "could not start" in text and "passages.jsonl" in text
    assert "a worker process failed to start" in text
