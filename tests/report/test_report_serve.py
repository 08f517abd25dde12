"""`metasre report --serve`: the page on loopback follows a store being written, survives a bad
input, stops cleanly on Ctrl-C, and refuses what it cannot do in one line."""

from __future__ import annotations

import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from metasre.cli.main import main
from metasre.service import TrajectoryStore, episodes

from .conftest import Played

# Under `pytest -n`: with the other report tests (conftest `played`).
pytestmark = pytest.mark.xdist_group("report")


@contextmanager
def served(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`metasre report ARGS --serve --port 0` running: its URL, read from the line it prints."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "metasre.cli.main", "report", *args, "--serve", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()  # returns once it listens, or '' if it died
        assert "report: serving http://" in line, line + proc.stderr.read()
        yield line.split("serving ")[1].split()[0], proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        proc.stderr.close()


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as reply:
        return str(reply.read().decode())


def stops_cleanly(url: str, proc: subprocess.Popen[str], sig: signal.Signals) -> None:
    """`sig` ends the server: exit 0, a last line saying so, no traceback, the port closed."""
    assert proc.stderr is not None
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == 0
    rest = proc.stderr.read()
    assert rest.strip().splitlines()[-1] == "report: stopped serving", rest
    assert "Traceback" not in rest
    with pytest.raises(urllib.error.URLError) as refused:
        get(url)
    assert isinstance(refused.value.reason, ConnectionRefusedError)


def _count(store: Path) -> int:
    s = TrajectoryStore(store)
    try:
        return sum(1 for _ in episodes(s))
    finally:
        s.close()


def test_the_page_follows_its_inputs_and_stops_cleanly(played: Played, tmp_path: Path) -> None:
    """A store another connection writes, as a running server does, and an export being
    rewritten: the page is rebuilt when one changes and only then (reading a store must not look
    like a change); an input that stops making sense gives a page saying why, which reloads
    itself; Ctrl-C stops the server. One server for all: its start is most of the cost."""
    source = played.stores["expert"]
    live = tmp_path / "live.db"
    shutil.copyfile(source, live)
    with closing(sqlite3.connect(live)) as db, db:
        kept = db.execute("SELECT min(session_id) FROM sessions").fetchone()[0]
        for table in ("events", "requests", "sessions"):
            db.execute(f"DELETE FROM {table} WHERE session_id != ?", (kept,))
    before, after = _count(live), _count(source)
    assert 0 < before < after
    export = tmp_path / "random.jsonl"
    assert main(["export", "--store", str(played.stores["random"]), "--out", str(export)]) == 0
    one = export.read_text().splitlines()[0] + "\n"
    file = tmp_path / "live.jsonl"
    file.write_text(one)
    with served(f"store={live}", f"file={file}", "--host", "localhost") as (url, proc):
        assert url.startswith("http://127.0.0.1:")
        page = get(url)
        assert f"{before + 1} finished episodes" in page and "fetch('/version'" in page
        version = get(url + "version")
        assert get(url) == page and get(url + "version") == version  # no reloads for ever
        # A writer that stays connected, as `metasre serve` does, commits the other sessions.
        with closing(sqlite3.connect(live)) as writer:
            writer.execute("ATTACH DATABASE ? AS source", (str(source),))
            with writer:
                for table in ("sessions", "events", "requests"):
                    writer.execute(
                        f"INSERT INTO main.{table} SELECT * FROM source.{table} "
                        "WHERE session_id != ?",
                        (kept,),
                    )
            assert get(url + "version") != version
            assert f"{after + 1} finished episodes" in get(url)
        # A line cut in half: a 503 page saying so, which reloads when the file changes again.
        file.write_text(one + '{"half a line')
        with pytest.raises(urllib.error.HTTPError) as failed:
            get(url)
        assert failed.value.code == 503
        body = failed.value.read().decode()
        failed.value.close()
        assert "cannot build the report" in body and "line 2 is not JSON" in body
        assert "fetch('/version'" in body
        file.write_text(one + one)
        assert f"{after + 2} finished episodes" in get(url)
        with pytest.raises(urllib.error.HTTPError) as missing:
            get(url + "etc/passwd")
        assert missing.value.code == 404
        missing.value.close()
        stops_cleanly(url, proc, signal.SIGINT)


def test_what_it_cannot_do_is_refused_in_one_line(
    played: Played, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(played.stores["team"])
    # Never beyond this machine: the page shows every trajectory and checks nobody.
    for host in ("0.0.0.0", "::", "10.0.0.7", "192.168.1.1", "example.com", "127.0.0.1.nip.io"):
        with pytest.raises(SystemExit) as refused:
            main(["report", store, "--serve", "--host", host])
        assert refused.value.code == 2
        err = capsys.readouterr().err
        assert f"{host!r} is not a loopback address" in err and "Traceback" not in err, err
    for port in ("70000", "-1", "http"):
        with pytest.raises(SystemExit) as refused:
            main(["report", store, "--serve", "--port", port])
        assert refused.value.code == 2
        assert "expected a port number, 0-65535" in capsys.readouterr().err
    mixed = {
        ("--serve", "--out", str(tmp_path / "r.html")): "--serve writes no file",
        ("--port", "9000"): "--host and --port are for --serve",
        ("--host", "::1"): "--host and --port are for --serve",
    }
    for flags, said in mixed.items():
        assert main(["report", store, *flags]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r.html").exists()
    # A taken port: the exit code scripts know (5), before anything is served.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert main(["report", store, "--serve", "--port", port]) == 5
    err = capsys.readouterr().err
    assert f"port {port} on 127.0.0.1 is in use" in err and "Traceback" not in err
