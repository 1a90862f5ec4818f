"""The sample shop shipped as package data: findable from Python and the CLI, indexable, an unchanged excerpt of
the evaluation shop, and listed in the package data a wheel carries."""

from __future__ import annotations

import fnmatch
import json
import tomllib
from pathlib import Path

import pytest

from ask_engine import samples
from ask_engine.cli import main
from ask_engine.errors import ConfigError
from tests.conftest import ROOT, SAMPLE_SHOP


def test_the_sample_shop_is_found_by_name() -> None:
    assert "fjord-fell" in samples.names()
    folder = samples.path("fjord-fell")
    assert folder == samples.path()
    assert (folder / "shop.toml").is_file() and (folder / "products.json").is_file()
    with pytest.raises(ConfigError, match="fjord-fell"):
        samples.path("../fjord-fell")


def test_the_sample_is_an_unchanged_excerpt_of_the_eval_shop() -> None:
    folder = samples.path("fjord-fell")
    full = {p["handle"]: p for p in json.loads((SAMPLE_SHOP / "products.json").read_text("utf-8"))["products"]}
    shipped = json.loads((folder / "products.json").read_text("utf-8"))["products"]
    assert 5 <= len(shipped) < len(full)
    for product in shipped:
        assert product == full[product["handle"]]
    assert "tarn-wellington-boot" in {p["handle"] for p in shipped}  # the README's example product
    for file in folder.rglob("*"):
        if file.is_file() and file.name != "products.json":
            assert file.read_bytes() == (SAMPLE_SHOP / file.relative_to(folder)).read_bytes(), file


def test_every_sample_file_is_package_data() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["package-data"][
        "ask_engine"
    ]
    package = ROOT / "ask_engine"
    for file in (package / "samples").rglob("*"):
        if file.is_file() and file.suffix != ".py" and "__pycache__" not in file.parts:
            rel = file.relative_to(package).as_posix()
            assert any(fnmatch.fnmatch(rel, pattern) for pattern in patterns), rel


def test_cli_lists_the_samples_and_prints_one_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["samples"]) == 0
    out = capsys.readouterr().out
    folder = samples.path("fjord-fell")
    assert f"fjord-fell  {folder}" in out
    assert f"next: ask-engine index {folder} --out indexes/fjord-fell" in out
    assert main(["samples", "fjord-fell"]) == 0
    assert capsys.readouterr().out.strip() == str(folder)
    assert main(["samples", "no-such-shop"]) == 2
    assert "no sample shop 'no-such-shop'" in capsys.readouterr().err


def test_the_shipped_sample_indexes_and_answers_the_readme_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], embedder: object
) -> None:
    out = tmp_path / "fjord-fell"
    assert main(["index", str(samples.path("fjord-fell")), "--out", str(out), "--quiet"]) == 0
    assert "9 products" in capsys.readouterr().out
    assert main(["ask", "--index", str(out), "Is the Tarn Wellington Boot waterproof?"]) == 0
    answer = capsys.readouterr().out
    assert "has not recorded whether the Tarn Wellington Boot is waterproof" in answer
    assert "https://fjordandfell.example/products/tarn-wellington-boot" in answer
