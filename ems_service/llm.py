"""LLM backends (the home of httpx and transformers): an OpenAI-compatible endpoint or a local model.

Both are plain callables `messages -> text`, handed to the coach (and optionally the condenser's summarizer).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import httpx

from ems_service.config import LLMSettings
from ems_service.errors import LLMError

logger = logging.getLogger(__name__)

Messages = list[dict[str, str]]


class ChatClient:
    """OpenAI-compatible chat completions (vLLM, Ollama, llama.cpp server, a hosted API)."""

    def __init__(self, base_url: str, *, model: str, api_key: str | None = None, timeout_s: float = 10.0,
                 max_tokens: int = 256) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s)
        self.model = model
        self.max_tokens = max_tokens
        self.calls = 0

    def __call__(self, messages: Messages) -> str:
        self.calls += 1
        try:
            r = self._client.post("/chat/completions", json={
                "model": self.model, "messages": messages, "temperature": 0, "max_tokens": self.max_tokens,
            })
        except httpx.TimeoutException as exc:
            raise LLMError("LLM endpoint timed out") from exc
        except httpx.HTTPError as exc:
            raise LLMError(f"LLM endpoint unreachable: {type(exc).__name__}") from exc
        if r.status_code >= 400:
            raise LLMError(f"LLM endpoint answered {r.status_code}")
        try:
            return r.json()["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError("LLM endpoint answered without choices[0].message.content") from exc

    def summarize(self, prompt: str) -> str:
        return self([{"role": "user", "content": prompt}])

    def close(self) -> None:
        self._client.close()


class LocalLLM:
    """A causal or seq2seq model directory run in-process with transformers (CPU, or GPU when present)."""

    def __init__(self, path: str | Path, *, max_new_tokens: int = 256) -> None:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

        path = Path(path)
        if not (path / "config.json").exists():
            raise LLMError(f"no model at {path} (config.json missing)")
        config = AutoConfig.from_pretrained(path, local_files_only=True)
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        cls = AutoModelForSeq2SeqLM if config.is_encoder_decoder else AutoModelForCausalLM
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model = cls.from_pretrained(path, local_files_only=True).to(self.device).eval()
        self.encoder_decoder = bool(config.is_encoder_decoder)
        self.max_new_tokens = max_new_tokens
        self._lock = threading.Lock()
        self._torch = torch
        self.calls = 0

    def _prompt(self, messages: Messages) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return "\n\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\n\nassistant:"

    def __call__(self, messages: Messages) -> str:
        self.calls += 1
        inputs = self.tokenizer(self._prompt(messages), return_tensors="pt", truncation=True,
                                max_length=getattr(self.model.config, "max_position_embeddings", 1024) - self.max_new_tokens)
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with self._lock, self._torch.no_grad():
            out = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False, pad_token_id=pad)
        tokens = out[0] if self.encoder_decoder else out[0][inputs["input_ids"].shape[1]:]
        return self.tokenizer.decode(tokens, skip_special_tokens=True)

    def summarize(self, prompt: str) -> str:
        return self([{"role": "user", "content": prompt}])

    def close(self) -> None:
        pass


def build_llm(settings: LLMSettings) -> ChatClient | LocalLLM | None:
    """The configured backend, or None when no LLM is configured."""
    if settings.base_url:
        key = settings.api_key.get_secret_value() if settings.api_key else None
        return ChatClient(settings.base_url, model=settings.model, api_key=key, timeout_s=settings.timeout_s,
                          max_tokens=settings.max_new_tokens)
    if settings.local_model_path:
        return LocalLLM(settings.local_model_path, max_new_tokens=settings.max_new_tokens)
    return None
