# One command each: `make serve` (embedded mode), `make test` (whole suite), `make bench`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install serve test lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# torch first, pinned, so that no dependency pulls a CUDA build.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev]"
	$(BIN)/pip install --quiet --no-deps webarena-verified==1.2.3  # its task list only (it pins an older pydantic)
	HF_HUB_OFFLINE=1 $(BIN)/webcoach embedder export
	touch $(STAMP)

install: $(STAMP)

serve: install
	HF_HUB_OFFLINE=1 $(BIN)/webcoach serve

test: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check condenser coach ems_service migrations tests benchmarks webcoach

bench: install
	$(BIN)/pip install --quiet -e ".[dev,bench]"
	HF_HUB_OFFLINE=1 $(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) data .pytest_cache
