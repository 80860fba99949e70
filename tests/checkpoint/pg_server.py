"""Start and stop a real, throwaway PostgreSQL server for tests and benchmarks.

`PgServer` runs Debian's `initdb` + `pg_ctl` in a temporary directory: trust auth, listening
only on 127.0.0.1 on a free port, unix socket inside the temp dir. `stop()` shuts the server
down and removes the directory (also registered with `atexit` as a backstop). When the
process runs as root, the server runs as the `postgres` system user (PostgreSQL refuses root).

Set `WARPGRAPH_PG_BINDIR` to choose the binaries; `find_bindir()` otherwise tries
`pg_config --bindir`, `/usr/lib/postgresql/*/bin` (newest first) and `PATH`.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

__all__ = ["INSTALL_HINT", "PgServer", "PgServerError", "create_database", "find_bindir"]

INSTALL_HINT = "apt-get install -y postgresql"

# Settings for a fast scratch server (tests); benchmarks keep PostgreSQL's defaults.
FAST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


class PgServerError(RuntimeError):
    """The scratch PostgreSQL server could not be started."""


def _has_tools(bindir: str | os.PathLike) -> bool:
    return all(os.access(Path(bindir, tool), os.X_OK) for tool in ("initdb", "pg_ctl", "postgres"))


def _version_key(path: str) -> tuple[int, ...]:
    name = Path(path).parent.name
    return tuple(int(p) for p in name.split(".") if p.isdigit())


def find_bindir() -> Path | None:
    """The directory holding `initdb`, `pg_ctl` and `postgres`, or None if not installed."""
    override = os.environ.get("WARPGRAPH_PG_BINDIR")
    if override:
        return Path(override) if _has_tools(override) else None
    candidates: list[str] = []
    try:
        out = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, timeout=10, check=False
        )
        if out.returncode == 0 and out.stdout.strip():
            candidates.append(out.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(os.path.realpath(initdb)).parent))
    for cand in candidates:
        if _has_tools(cand):
            return Path(cand)
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    """A scratch PostgreSQL cluster: `start()`, `dsn`, `stop()` (also a context manager)."""

    def __init__(
        self,
        bindir: str | os.PathLike | None = None,
        *,
        settings: dict[str, str] | None = None,
        fast: bool = True,
    ) -> None:
        found = Path(bindir) if bindir is not None else find_bindir()
        if found is None or not _has_tools(found):
            raise PgServerError(
                "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found; "
                f"install them with `{INSTALL_HINT}` or set WARPGRAPH_PG_BINDIR"
            )
        self.bindir = found
        self.settings = {**(FAST_SETTINGS if fast else {}), **(settings or {})}
        self.port: int | None = None
        self.tmpdir: Path | None = None
        self.user = "postgres"
        self._run_as: dict = {}
        self._running = False

    # --- lifecycle
    def start(self) -> PgServer:
        """initdb a temp dir and start the server (`pg_ctl start -w`); retries a busy port."""
        self.tmpdir = Path(tempfile.mkdtemp(prefix="warpgraph-pg-"))
        atexit.register(self.stop)
        try:
            self._prepare_user()
            self._initdb()
            last = ""
            for _ in range(3):
                self.port = _free_port()
                ok, last = self._pg_ctl_start()
                if ok:
                    self._running = True
                    return self
            raise PgServerError(f"pg_ctl start failed:\n{last}")
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server (fast, then immediate) and remove the temp dir; idempotent."""
        tmp, self.tmpdir = self.tmpdir, None
        if tmp is None:
            return
        if self._running:
            self._running = False
            for mode in ("fast", "immediate"):
                res = self._run(
                    [
                        self._bin("pg_ctl"),
                        "stop",
                        "-D",
                        str(tmp / "data"),
                        "-m",
                        mode,
                        "-w",
                        "-t",
                        "30",
                    ],
                    check=False,
                )
                if res.returncode == 0:
                    break
        shutil.rmtree(tmp, ignore_errors=True)

    def __enter__(self) -> PgServer:  # noqa: PYI034
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- connection strings
    @property
    def dsn(self) -> str:
        """libpq connection string for the `postgres` database over TCP loopback."""
        return self.dsn_for("postgres")

    def dsn_for(self, dbname: str) -> str:
        """libpq connection string for database `dbname`."""
        if self.port is None:
            raise PgServerError("server not started")
        return f"host=127.0.0.1 port={self.port} user={self.user} dbname={dbname}"

    # --- internals
    def _bin(self, name: str) -> str:
        return str(self.bindir / name)

    def _prepare_user(self) -> None:
        assert self.tmpdir is not None
        if os.geteuid() != 0:
            return
        import pwd

        try:
            pw = pwd.getpwnam("postgres")
        except KeyError as exc:
            raise PgServerError(
                "running as root, and PostgreSQL refuses to run as root: no `postgres` system "
                f"user to run it as (`{INSTALL_HINT}` creates one)"
            ) from exc
        os.chown(self.tmpdir, pw.pw_uid, pw.pw_gid)
        self._run_as = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}

    def _run(self, args: list[str], *, check: bool = True) -> subprocess.CompletedProcess:
        env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
        env.pop("PGDATA", None)
        res = subprocess.run(
            args,
            capture_output=True,
            text=True,
            env=env,
            cwd=self.tmpdir or "/",
            timeout=120,
            check=False,
            **self._run_as,
        )
        if check and res.returncode != 0:
            raise PgServerError(
                f"{' '.join(args)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}"
            )
        return res

    def _initdb(self) -> None:
        assert self.tmpdir is not None
        data = self.tmpdir / "data"
        self._run(
            [
                self._bin("initdb"),
                "-D",
                str(data),
                "-U",
                self.user,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ]
        )
        lines = {
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self.tmpdir}'",
            "max_connections": "100",
            **{k: str(v) for k, v in self.settings.items()},
        }
        conf = "".join(f"{k} = {v}\n" for k, v in lines.items())
        with open(data / "postgresql.conf", "a", encoding="utf-8") as fh:
            fh.write(conf)

    def _pg_ctl_start(self) -> tuple[bool, str]:
        assert self.tmpdir is not None
        log = self.tmpdir / "server.log"
        res = self._run(
            [
                self._bin("pg_ctl"),
                "start",
                "-w",
                "-t",
                "60",
                "-D",
                str(self.tmpdir / "data"),
                "-l",
                str(log),
                "-o",
                f"-p {self.port}",
            ],
            check=False,
        )
        if res.returncode == 0:
            return True, ""
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        return False, f"{res.stdout}\n{res.stderr}\n{tail}"


def create_database(admin_dsn: str, prefix: str = "wg") -> str:
    """Create a fresh database on the server of `admin_dsn`; return its name."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name
