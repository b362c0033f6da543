"""A real local Neo4j 5.26 Community server for development, tests and CI.

``start`` resolves the Neo4j jars with Maven once (later runs reuse ``~/.m2`` and a cached
classpath), compiles the small launcher in ``neo4j_launcher/``, runs it detached with a Bolt
connector on ``127.0.0.1`` and returns once Bolt accepts connections. ``stop`` shuts it down
cleanly. Users with Docker or Aura skip all this and point ``NEO4J_URI`` at their server.

Layout under ``settings.home``: ``neo4j/`` (the data dir: ``db/``, ``neo4j.pid``, ``neo4j.log``)
and ``neo4j-launcher/<hash>/`` (the cached classpath and compiled launcher).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import neo4j
from neo4j.exceptions import AuthError, DriverError, Neo4jError

from apiatlas.config import Settings
from apiatlas.errors import ConfigError, StoreError

LAUNCHER_DIR = Path(__file__).resolve().parent / "neo4j_launcher"
LAUNCHER_SOURCE = LAUNCHER_DIR / "src" / "main" / "java" / "dev" / "apiatlas" / "neo4j" / "Launcher.java"
LAUNCHER_CLASS = "dev.apiatlas.neo4j.Launcher"
READY_LINE = "apiatlas-neo4j ready"
HEAP = "-Xmx2g"
"""Neo4j keeps each ingest in one transaction, and a transaction may use up to 70 % of the heap:
with 512 MB a 6,000-operation spec ran out of transaction memory (scale bench, 2026-11-24)."""
DEFAULT_PORT = 7687
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# Popen objects of servers started by this process, so a stopped child is reaped rather than
# lingering as a zombie that still answers ``kill(pid, 0)``.
_children: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class ServerStatus:
    """What ``status`` found.

    Attributes:
        uri: The Bolt URI checked.
        pid: The launcher's process id when a server started here is running, else ``None``.
        accepting: True when Bolt at ``uri`` accepts connections (any server, local or not).
        data_dir: The data directory of the local server.
    """

    uri: str
    pid: int | None
    accepting: bool
    data_dir: Path

    @property
    def running(self) -> bool:
        """True when a server started by apiatlas is alive."""
        return self.pid is not None


def data_dir_for(settings: Settings, data_dir: Path | None = None) -> Path:
    """The server's data directory: ``data_dir`` or ``settings.home / "neo4j"``."""
    return Path(data_dir) if data_dir is not None else settings.home / "neo4j"


def port_of(uri: str) -> int:
    """The port of a Bolt URI (7687 when it has none).

    Raises:
        ConfigError: The URI is not a local ``bolt://`` or ``neo4j://`` address.
    """
    parts = urlsplit(uri)
    if parts.scheme not in ("bolt", "neo4j") or parts.hostname not in _LOOPBACK:
        raise ConfigError(
            f"NEO4J_URI={uri!r}: apiatlas only starts a server on this machine; use "
            "bolt://127.0.0.1:<port>, or run your own server and skip `apiatlas neo4j start`."
        )
    return parts.port or DEFAULT_PORT


def _pid_file(data: Path) -> Path:
    return data / "neo4j.pid"


def _log_file(data: Path) -> Path:
    return data / "neo4j.log"


def _alive(pid: int) -> bool:
    child = _children.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A pid can be reused: only a process running our launcher counts.
    cmdline = Path(f"/proc/{pid}/cmdline")
    return not cmdline.exists() or LAUNCHER_CLASS.encode() in cmdline.read_bytes()


def _recorded(data: Path) -> tuple[int, str] | None:
    """``(pid, uri)`` from the pid file when that process is alive; removes a stale file."""
    path = _pid_file(data)
    try:
        record = json.loads(path.read_text())
        pid, uri = int(record["pid"]), str(record["uri"])
    except (OSError, ValueError, KeyError, TypeError):
        path.unlink(missing_ok=True)
        return None
    if not _alive(pid):
        path.unlink(missing_ok=True)
        return None
    return pid, uri


def _log_tail(data: Path, lines: int = 15) -> str:
    try:
        text = _log_file(data).read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


def _ready_logged(data: Path) -> bool:
    try:
        return READY_LINE.encode() in _log_file(data).read_bytes()
    except OSError:
        return False


def _check_bolt(uri: str, settings: Settings, timeout: float = 3.0) -> bool:
    """True when Bolt at ``uri`` accepts these credentials.

    Raises:
        StoreError: The server answered but refused the credentials.
    """
    auth = (settings.neo4j_username, settings.neo4j_password)
    try:
        with neo4j.GraphDatabase.driver(uri, auth=auth, connection_timeout=timeout) as driver:
            driver.verify_connectivity()
        return True
    except AuthError as e:
        raise StoreError(
            f"Neo4j at {uri} refused the credentials for user {settings.neo4j_username!r}: "
            "set NEO4J_USERNAME/NEO4J_PASSWORD to the ones the server was first started with "
            f"(or delete its data dir to start afresh). ({e.message})"
        ) from e
    except (DriverError, Neo4jError, OSError):
        return False


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _run(cmd: list[str], what: str) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise StoreError(f"{what} failed to run ({' '.join(cmd[:3])} ...): {e}") from e
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip().splitlines()[-20:]
        raise StoreError(f"{what} failed (exit {done.returncode}):\n" + "\n".join(output))


def launcher_classpath(settings: Settings) -> str:
    """The Java classpath of the compiled launcher and its Neo4j jars, building it if needed.

    The first call runs Maven (downloading Neo4j into ``~/.m2``) and ``javac``; the result is
    cached under ``settings.home / "neo4j-launcher" / <hash of pom and source>``.

    Raises:
        StoreError: Java 17 or Maven is missing, or Maven cannot resolve the artifacts.
    """
    for tool in ("java", "javac", "mvn"):
        if shutil.which(tool) is None:
            raise StoreError(
                f"`{tool}` is not on PATH: install a JDK 17 and Maven 3.8+ to run a local "
                "Neo4j, or set NEO4J_URI to a server you already run (Docker, Aura)."
            )
    digest = hashlib.sha256()
    for part in (LAUNCHER_DIR / "pom.xml", LAUNCHER_SOURCE):
        digest.update(part.read_bytes())
    # Absolute: Maven resolves a relative -Dmdep.outputFile against the pom's folder, not ours.
    cache = settings.home.resolve() / "neo4j-launcher" / digest.hexdigest()[:16]
    cp_file, classes, marker = cache / "classpath.txt", cache / "classes", cache / "built"
    cache.mkdir(parents=True, exist_ok=True)
    # One build at a time: two processes starting servers at once (parallel test workers, two
    # shells) would otherwise compile into the same folder together.
    with _locked(cache / "build.lock"):
        if marker.exists():
            jars = cp_file.read_text().strip()
            if all(Path(jar).exists() for jar in jars.split(os.pathsep)):
                return f"{classes}{os.pathsep}{jars}"
        _run(
            ["mvn", "-q", "-B", "-f", str(LAUNCHER_DIR / "pom.xml"), "dependency:build-classpath",
             f"-Dmdep.outputFile={cp_file}"],
            "resolving the Neo4j jars with Maven (needs Maven Central or a filled ~/.m2)",
        )  # fmt: skip
        jars = cp_file.read_text().strip()
        _run(
            ["javac", "--release", "17", "-cp", jars, "-d", str(classes), str(LAUNCHER_SOURCE)],
            "compiling the Neo4j launcher",
        )
        marker.write_text(digest.hexdigest())
    return f"{classes}{os.pathsep}{jars}"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` for the body (``flock``; no lock where it is missing)."""
    try:
        import fcntl
    except ImportError:  # Windows: builds are not guarded there
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def start(
    settings: Settings, *, port: int | None = None, data_dir: Path | None = None, timeout: float = 120
) -> str:
    """Start the local Neo4j server (idempotent) and return its Bolt URI once it accepts logins.

    Args:
        settings: Credentials (the password is set on the first start) and ``home``.
        port: Bolt port; defaults to the port of ``settings.neo4j_uri``.
        data_dir: Where the database, pid file and log live; defaults to ``home / "neo4j"``.
        timeout: Seconds to wait for Bolt.

    Raises:
        ConfigError: The URI is not local or the password is shorter than 8 characters.
        StoreError: Java/Maven problems, a busy port, or a server that did not come up.
    """
    port = port if port is not None else port_of(settings.neo4j_uri)
    data = data_dir_for(settings, data_dir)
    if len(settings.neo4j_password) < 8:
        raise ConfigError("Neo4j needs a password of at least 8 characters: set NEO4J_PASSWORD.")
    recorded = _recorded(data)
    if recorded is not None:
        return _wait_ready(recorded[0], recorded[1], settings, data, timeout, launched=False)
    uri = f"bolt://127.0.0.1:{port}"
    if _port_open(port):
        raise StoreError(
            f"port {port} is already in use by another process: stop it, or choose another "
            "port with NEO4J_URI=bolt://127.0.0.1:<port>."
        )
    classpath = launcher_classpath(settings)
    (data / "db").mkdir(parents=True, exist_ok=True)
    cmd = ["java", HEAP, "-cp", classpath, LAUNCHER_CLASS, "--home", str((data / "db").resolve()),
           "--port", str(port), "--listen", "127.0.0.1"]  # fmt: skip
    # The password goes through the environment: a command line is visible to everyone in ps.
    env = {**os.environ, "APIATLAS_NEO4J_PASSWORD": settings.neo4j_password}
    # A fresh log per run: the ready line in it then belongs to this process.
    with _log_file(data).open("wb") as log:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    _children[proc.pid] = proc
    _pid_file(data).write_text(json.dumps({"pid": proc.pid, "uri": uri, "port": port}))
    return _wait_ready(proc.pid, uri, settings, data, timeout, launched=True)


def _wait_ready(
    pid: int, uri: str, settings: Settings, data: Path, timeout: float, *, launched: bool
) -> str:
    """Wait for Bolt; a server launched by this call is stopped again when it fails."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            _pid_file(data).unlink(missing_ok=True)
            raise StoreError(
                f"the Neo4j launcher exited before Bolt opened at {uri}; its log "
                f"({_log_file(data)}) ends with:\n{_log_tail(data)}"
            )
        # Bolt opens before the launcher has set the initial password: wait for its ready line.
        try:
            if _ready_logged(data) and _check_bolt(uri, settings):
                return uri
        except StoreError:
            if launched:
                stop(settings, data_dir=data)
            raise
        time.sleep(0.5)
    if launched:
        stop(settings, data_dir=data)
    raise StoreError(
        f"Neo4j did not accept Bolt connections at {uri} within {timeout:.0f} s. "
        f"Its log ({_log_file(data)}) ends with:\n{_log_tail(data)}"
    )


def stop(settings: Settings, *, data_dir: Path | None = None, timeout: float = 60) -> bool:
    """Stop the local server cleanly (SIGTERM, then SIGKILL after ``timeout``).

    Returns:
        True when a running server was stopped, False when none was running.
    """
    data = data_dir_for(settings, data_dir)
    recorded = _recorded(data)
    if recorded is None:
        return False
    pid = recorded[0]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.1)
    child = _children.pop(pid, None)
    if child is not None:
        child.wait()
    _pid_file(data).unlink(missing_ok=True)
    return True


def status(settings: Settings, *, data_dir: Path | None = None) -> ServerStatus:
    """Whether the local server runs and whether ``settings.neo4j_uri`` accepts connections."""
    data = data_dir_for(settings, data_dir)
    recorded = _recorded(data)
    uri = recorded[1] if recorded is not None else settings.neo4j_uri
    try:
        accepting = _check_bolt(uri, settings)
    except StoreError:
        accepting = True  # It answered; only the credentials were wrong.
    return ServerStatus(
        uri=uri, pid=recorded[0] if recorded else None, accepting=accepting, data_dir=data
    )


def cli(action: Literal["start", "stop", "status"], settings: Settings) -> int:
    """``apiatlas neo4j start|stop|status``: print what happened and return the exit code.

    ``start`` prints the Bolt URI. ``status`` exits 0 when Bolt accepts connections, else 1.
    """
    try:
        if action == "start":
            print(start(settings))
            return 0
        if action == "stop":
            print("stopped" if stop(settings) else "not running")
            return 0
        found = status(settings)
        state = f"running (pid {found.pid})" if found.running else "not started by apiatlas"
        print(f"{found.uri}: {'accepting connections' if found.accepting else 'not reachable'}")
        print(f"local server: {state}; data: {found.data_dir}")
        return 0 if found.accepting else 1
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
