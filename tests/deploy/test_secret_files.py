"""`EMS_<NAME>_FILE` settings (Docker / Compose secrets): the file's content is the setting, nested names too; a
variable set twice or an unreadable file stops the start instead of running on a default."""

from __future__ import annotations

import pytest

from ems_service.config import Settings


def test_a_file_stands_for_its_setting(tmp_path, monkeypatch):
    (tmp_path / "admin").write_text("admin-key-read-from-a-file\n")
    (tmp_path / "llm").write_text("sk-llm-key\r\n")
    (tmp_path / "url").write_text("sqlite:///from/a/file.db")
    monkeypatch.setenv("EMS_ADMIN_KEY_FILE", str(tmp_path / "admin"))
    monkeypatch.setenv("EMS_LLM__API_KEY_FILE", str(tmp_path / "llm"))
    monkeypatch.setenv("EMS_DATABASE_URL_FILE", str(tmp_path / "url"))
    settings = Settings(_env_file=None)
    assert settings.admin_key.get_secret_value() == "admin-key-read-from-a-file"
    assert settings.llm.api_key.get_secret_value() == "sk-llm-key"
    assert settings.database_url == "sqlite:///from/a/file.db"
    assert Settings(_env_file=None, database_url="sqlite://").database_url == "sqlite://", "explicit values win"


def test_set_twice_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "admin").write_text("admin-key-read-from-a-file")
    monkeypatch.setenv("EMS_ADMIN_KEY_FILE", str(tmp_path / "admin"))
    monkeypatch.setenv("EMS_ADMIN_KEY", "another-admin-key-0123")
    with pytest.raises(ValueError, match="both EMS_ADMIN_KEY and EMS_ADMIN_KEY_FILE"):
        Settings(_env_file=None)


def test_unreadable_file_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("EMS_ADMIN_KEY_FILE", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="EMS_ADMIN_KEY_FILE: cannot read"):
        Settings(_env_file=None)
