# ask_engine: every task a user or CI runs. `make serve` and `make test` work on a fresh clone.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SHOP ?= eval/shops/fjord-fell
INDEX ?= indexes/fjord-fell
HOST ?= 127.0.0.1
PORT ?= 8000
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: setup setup-serve setup-test setup-bench index demo serve test test-fast lint check eval bench fuzz clean

# llama-cpp-python compiles llama.cpp at install time, by default for the CPU it is built on. Such a build crashes on
# CPUs with AMX (Intel Xeon) on the first prompt longer than one token, and may not run on other CPUs: build for any
# x86-64 instead. pip's wheel cache ignores CMAKE_ARGS, so an earlier native build could be reused: --no-cache-dir,
# and a stamp holding the flags, rebuilt when they change.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLAMA_STAMP := $(VENV)/.llama-cpp-portable
ifneq ($(shell cat $(LLAMA_STAMP) 2>/dev/null),$(LLAMA_CMAKE_ARGS))
.PHONY: $(LLAMA_STAMP)
endif

# Two tiers, each a stamp that re-runs pip only when pyproject.toml changed:
#   setup-serve  what `make serve` needs: the package and its runtime dependencies, nothing else;
#   setup-test   what `make test` needs: the serve tier plus the dev, llm-test (llama.cpp, built portably) and bench
#                (LlamaIndex, whose peer figure the bench tests check) extras.
# `make setup` is the test tier. torch==2.13.0 (the local CPU wheel) goes in first, so sentence-transformers never
# pulls a CUDA build. The serve tier includes the default embedder's ONNX Runtime (optimum-onnx, onnxruntime).
setup: setup-test
setup-serve: $(VENV)/.installed-serve
setup-test: $(VENV)/.installed-test

$(VENV)/.installed-serve: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed-serve $(LLAMA_STAMP) Makefile
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install -q torch==2.13.0 -e '.[dev,llm-test,bench]'
	touch $@

# Only `make bench`: the redis extra (the replica figures share a Redis) and the bench extra (the LlamaIndex peer,
# llama-index-core and its HuggingFace embedding), kept out of setup-serve/setup-test so the main install stays lean.
# A stamp like the tiers': re-run when the serve tier (so pyproject.toml) changed. torch==2.13.0 is named again so
# pip never swaps it for a CUDA build while resolving the extra.
setup-bench: $(VENV)/.installed-bench

$(VENV)/.installed-bench: $(VENV)/.installed-serve
	$(BIN)/python -m pip install -q torch==2.13.0 -e '.[redis,bench]'
	touch $@

# Order-only: a changed pyproject.toml re-runs pip, but does not rebuild llama.cpp.
$(LLAMA_STAMP): | $(VENV)/.installed-serve
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install -q --no-cache-dir --force-reinstall --no-deps \
		'llama-cpp-python>=0.3'
	echo '$(LLAMA_CMAKE_ARGS)' > $@

index: setup-serve
	$(BIN)/ask-engine index $(SHOP) --out $(INDEX)

demo: index
	@for q in "Can I return these boots if they don't fit?" \
	          "Do you ship to Norway?" \
	          "Is the Tarn Wellington Boot waterproof?" \
	          "What allergens are in the peanut butter?" \
	          "Add two of these to my cart - do they come in black?"; do \
		echo "\n$$ ask-engine ask --index $(INDEX) \"$$q\""; \
		$(BIN)/ask-engine ask --index $(INDEX) "$$q"; \
	done

serve: index
	$(BIN)/ask-engine serve --index $(INDEX) --host $(HOST) --port $(PORT)

test: setup
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not llm and not slow"

lint: setup
	$(BIN)/ruff check ask_engine tests
	$(BIN)/ruff format --check ask_engine tests
	$(BIN)/mypy

check: lint test

eval: index
	$(BIN)/ask-engine eval --index $(INDEX) eval/fjord-fell.jsonl --report eval/reports/latest \
		--min-faithfulness 0.95 --min-fact-recall 0.78 --min-abstention-f1 0.65 --min-link-recall 0.9 --min-message-recall 0.95

# Not in CI: schemathesis against the served OpenAPI document, a fixed budget and seed; exit 0 = no failures.
FUZZ_EXAMPLES ?= 500
fuzz: index
	$(BIN)/python -m pip install -q -e '.[fuzz]'
	$(BIN)/python -m tests.fuzz_openapi --index $(INDEX) --max-examples $(FUZZ_EXAMPLES)

# One run, every figure: the redis and bench extras go in first (setup-bench).
bench: setup-bench
	$(BIN)/python -m ask_engine.bench --out bench/results.json $(BENCH_ARGS)

clean:
	rm -rf $(VENV) indexes/*/ eval/reports .pytest_cache .mypy_cache .ruff_cache
