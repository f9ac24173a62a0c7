# One command each: `make serve` (embedded mode), `make test` (whole suite), `make bench`, `make docker-test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
GRAPH := $(VENV)/share/webcoach/all-MiniLM-L6-v2.selective-int8.onnx
TORCH := torch==2.13.0
TORCH_INDEX := https://download.pytorch.org/whl/cpu

.PHONY: install serve test lint bench docker-test clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# torch first, pinned and CPU-only, so that no dependency pulls a CUDA build (several GB of nvidia packages):
# from the PyTorch CPU index, or from the default index where that one cannot be reached within seconds
# (machines with their own package mirror).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --timeout 5 --retries 0 --index-url $(TORCH_INDEX) $(TORCH) \
		|| $(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet -e ".[dev]"
	$(BIN)/pip install --quiet --no-deps webarena-verified==1.2.3  # its task list only (it pins an older pydantic)
	touch $(STAMP)

# the ONNX graphs, exported after the install and again whenever the export's code or the graphs' names changed
# (ems_service/onnx_embedder/export.py, graphs.py), so that an environment installed before gets the new graphs; an
# edit of the runtime alone re-exports nothing
$(GRAPH): ems_service/onnx_embedder/export.py ems_service/onnx_embedder/graphs.py $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/webcoach embedder export

install: $(STAMP) $(GRAPH)

serve: install
	HF_HUB_OFFLINE=1 $(BIN)/webcoach serve

test: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

# ruff over the whole tree; mypy over the packages pyproject.toml names (strict on condenser and coach)
lint: install
	$(BIN)/ruff check condenser coach ems_service migrations tests benchmarks webcoach deploy examples
	$(BIN)/mypy

bench: install
	$(BIN)/pip install --quiet -e ".[dev,bench]"
	HF_HUB_OFFLINE=1 $(BIN)/python -m benchmarks.run

# Builds the images, runs the compose stack (PostgreSQL, migrations, API; then the fleet profile), kills and
# restarts the API, checks nothing was lost, tears down (deploy/docker_test.py). Needs Docker and Compose.
docker-test: install
	$(BIN)/python deploy/docker_test.py

clean:
	rm -rf $(VENV) data .pytest_cache
