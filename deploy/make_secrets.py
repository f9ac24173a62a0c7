"""Random secrets for docker-compose.yml, one file each in deploy/secrets/ (or the folder given): the PostgreSQL
password, the API's database URL holding it, and an admin key (printed, once). Existing files are kept, so a rerun
never locks the API out of a database initialised with the first password.

The folder is 0700; the files are 0644 because the containers' users (postgres 999, ems 10001) read them through
the bind mounts Compose makes of file secrets."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

DEFAULT = Path(__file__).resolve().parent / "secrets"


def ensure(folder: Path) -> dict[str, str]:
    """The three secrets, made where missing; returns their values."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    password_file = folder / "postgres_password"
    if not password_file.exists():
        _write(password_file, secrets.token_urlsafe(24))
    password = password_file.read_text().strip()
    made = {"postgres_password": password}
    for name, value in (("ems_database_url", f"postgresql+psycopg://ems:{password}@postgres:5432/ems"),
                        ("ems_admin_key", secrets.token_urlsafe(32))):
        if not (folder / name).exists():
            _write(folder / name, value)
        made[name] = (folder / name).read_text().strip()
    return made


def _write(path: Path, value: str) -> None:
    path.write_text(value + "\n")
    path.chmod(0o644)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    values = ensure(target)
    print(f"secrets in {target}; the admin key (Authorization: Bearer ...):")
    print(values["ems_admin_key"])
