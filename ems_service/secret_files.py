"""Settings read from files: `EMS_<NAME>_FILE=/run/secrets/x` stands for `EMS_<NAME>` holding that file's content.

Secrets (the admin key, a database URL with its password, the LLM key) then reach a container as Docker / Compose
secrets, mounted files, instead of environment variables, which `docker inspect`, `/proc/<pid>/environ` and every
child process can read (the convention of the official postgres image's `POSTGRES_PASSWORD_FILE`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic_settings import EnvSettingsSource

SUFFIX = "_FILE"


class SecretFiles(EnvSettingsSource):
    """The `EMS_*_FILE` variables as their `EMS_*` settings (one trailing newline dropped). Setting a variable and
    its `_FILE` twin at once is an error, as is a file that cannot be read: a wrong secret must not start a
    service on a default."""

    def _load_env_vars(self) -> Mapping[str, str | None]:
        prefix = self.env_prefix.upper()
        values: dict[str, str | None] = {}
        for name, path in os.environ.items():
            upper = name.upper()
            if not (upper.startswith(prefix) and upper.endswith(SUFFIX)) or not path:
                continue
            target = name[: -len(SUFFIX)]
            if target in os.environ:
                raise ValueError(f"both {target} and {name} are set: keep one")
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"{name}: cannot read {path}: {exc}") from exc
            values[target.lower()] = text.removesuffix("\n").removesuffix("\r")
        return values
