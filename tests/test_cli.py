"""`ask-engine`: help a user can read, readable and JSON output from a real index, clear errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ask_engine.cli import build_parser, main
from ask_engine.models import schema_errors


def test_ask_json_prints_a_schema_valid_response(sample_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ask", "--index", str(sample_index), "Is the Tarn Wellington Boot waterproof?", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out)
    assert schema_errors("ask_response", data) == []
    assert "not recorded" in data["answer"]["plain"]
    assert data["links"][0]["type"] == "product"


def test_ask_prints_the_answer_links_and_messages_readably(
    sample_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "ask",
            "--index",
            str(sample_index),
            "Add this to my cart - what is it made of?",
            "--id",
            "tarn-wellington-boot",
            "--id",
            "no-such-id",
            "--context",
            '{"address_country": "GB"}',
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("Nothing was changed")
    assert "natural rubber" in lines[0]
    assert "Links:" in lines
    assert any(
        "Tarn Wellington Boot — https://fjordandfell.example/products/tarn-wellington-boot" in ln for ln in lines
    )
    assert "Messages:" in lines
    assert any(ln.strip().startswith("info not_found ($.ids[1]):") for ln in lines)
    assert any(ln.strip().startswith("info operation_not_performed:") for ln in lines)


@pytest.mark.parametrize(
    ("context", "complaint"), [("{not json", "not valid JSON"), ('["a list"]', "must be a JSON object")]
)
def test_bad_context_is_a_clear_error_with_exit_code_2(
    sample_index: Path, capsys: pytest.CaptureFixture[str], context: str, complaint: str
) -> None:
    code = main(["ask", "--index", str(sample_index), "Do you ship to Norway?", "--context", context])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert "--context" in captured.err and complaint in captured.err


def test_a_request_over_the_limits_exits_2_naming_the_field(
    sample_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["ask", "--index", str(sample_index), "x" * 10_001])
    captured = capsys.readouterr()
    assert code == 2
    assert "$.query" in captured.err


def test_a_missing_index_exits_2_with_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ask", "--index", str(tmp_path / "nothing-here"), "hello?"])
    captured = capsys.readouterr()
    assert code == 2
    assert "no index" in captured.err


def test_serve_on_a_busy_port_fails_at_once_before_loading_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        # No index exists: an error about the port, not the index, shows the port was checked first.
        code = main(["serve", "--index", str(tmp_path / "no-index"), "--host", "127.0.0.1", "--port", str(port)])
    captured = capsys.readouterr()
    assert code == 2
    assert f"127.0.0.1:{port}" in captured.err and "already in use" in captured.err
    assert "no index" not in captured.err
    assert captured.out == ""  # no banner


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_help_is_for_users_and_lists_only_real_commands(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    out = _help([], capsys)
    assert "Answer shoppers' questions" in out
    assert "argument parsing" not in out and "lives with its module" not in out  # not the module docstring
    assert "bench" not in out  # `python -m ask_engine.bench`, not a subcommand
    assert "ask-engine index SHOP_DIR --out indexes/NAME" in out
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    listed = {
        line.split()[0]
        for line in out.split("COMMAND\n", 2)[-1].split("options:")[0].splitlines()
        if line.startswith("    ") and not line.startswith("      ")
    }
    assert listed == set(sub.choices)


def test_every_option_of_every_command_has_help_text(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        out = _help([name], capsys)
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help and action.help != argparse.SUPPRESS, (name, action.dest)
            assert action.help.split()[0] in out, (name, action.dest)


def test_ask_help_says_id_repeats(capsys: pytest.CaptureFixture[str]) -> None:
    out = " ".join(_help(["ask"], capsys).split())
    assert "--id ID what the question is about" in out and "repeat for several" in out


def test_an_index_option_naming_a_shop_folder_says_how_to_index_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.conftest import SAMPLE_SHOP

    # A model that cannot load shows the shop folder is recognised before any model is loaded.
    monkeypatch.setenv("ASK_ENGINE_EMBEDDING_MODEL", str(tmp_path / "no-model"))
    code = main(["ask", "--index", str(SAMPLE_SHOP), "Do you ship to Norway?"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{SAMPLE_SHOP} is a shop folder (it has shop.toml), not an index" in err
    assert f"`ask-engine index {SAMPLE_SHOP} --out indexes/fjord-fell`" in err
    assert "--out " + str(SAMPLE_SHOP) not in err  # never suggests writing the index inside the shop


# Modules that mean "the model's runtime was loaded": none of them may be imported before an input error.
_HEAVY = ("torch", "onnxruntime", "sentence_transformers", "transformers", "optimum")
_RUN_AND_LIST_HEAVY = """
import json, sys
from ask_engine.cli import main
code = main(sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))
print(json.dumps({"code": code, "heavy": heavy}))
"""


def _cli_in_fresh_process(*argv: str) -> tuple[dict[str, object], str]:
    """Run `ask-engine ARGV` in a new interpreter; its exit code and which heavy runtimes it imported."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    script = f"HEAVY = {_HEAVY!r}\n{_RUN_AND_LIST_HEAVY}"
    done = subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_ask_with_a_missing_index_fails_before_torch_or_onnxruntime_is_imported(tmp_path: Path) -> None:
    result, err = _cli_in_fresh_process("ask", "--index", str(tmp_path / "missing"), "x")
    assert result == {"code": 2, "heavy": []}
    assert "no index at" in err


def test_ask_with_a_damaged_index_fails_before_the_model_loads(tmp_path: Path) -> None:
    index = tmp_path / "damaged"
    (index / "versions" / "v1").mkdir(parents=True)  # CURRENT names a version that holds nothing
    (index / "CURRENT").write_text("v1\n")
    result, err = _cli_in_fresh_process("ask", "--index", str(index), "x")
    assert result == {"code": 2, "heavy": []}
    assert "incomplete" in err


def test_a_no_op_reindex_does_not_load_the_model(sample_index: Path, tmp_path: Path) -> None:
    import shutil

    from tests.conftest import SAMPLE_SHOP

    index = tmp_path / "copy"
    shutil.copytree(sample_index, index)
    result, _ = _cli_in_fresh_process("index", str(SAMPLE_SHOP), "--out", str(index), "--quiet")
    assert result == {"code": 0, "heavy": []}
