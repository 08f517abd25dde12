"""Sandbox escapes end to end: an agent edits the code so that the tests it runs try to get out.

Through a real `metasre serve` (admin token and another secret in its environment), agent A
appends to payment_service/handlers.py code that, when imported by any test run, tries to read
the scenario's hidden checks (by their path on the server, relative to the run, by a glob), the
server's environment, other runs' folders, to write outside its run folder, to connect to the
server's own port and to fork; when the hidden checks are in its folder (the grading run), it
raises with their text, hoping the grade repeats it. Meanwhile agent B plays another session on
the same server.

Checked: A's run_tests result says the run was stopped for a sandbox violation and holds no
secret, no line of the hidden checks; nothing was written outside; A's episode ends with a grade
that quotes none of the hidden file either; B's results are exactly what a fresh simulator gives
for its calls and B's fix is graded resolved; the server still serves.
"""

from __future__ import annotations

import asyncio
import secrets
import textwrap
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

import metasre.simulator.scenarios as scenarios
from metasre.agents.client import MetasreClient
from metasre.simulator import Episode

from .conftest import PAY, pay_solution
from .serve_process import metasre_serve

HIDDEN = Path(scenarios.__file__).parent / "payment_bad_deploy" / "hidden" / "probes.py"
HIDDEN_LINES = ("Grader probes for payment-bad-deploy", "def _bearer(user)")


def attack(port: int, outside: Path) -> str:
    return textwrap.dedent(f"""
        import glob as _glob, os as _os, socket as _socket
        def _try(label, fn):
            try:
                out = fn()
                print("ESCAPED" if out else "FOUND NOTHING", label, repr(out)[:300])
            except BaseException as exc:
                print("BLOCKED", label, type(exc).__name__)
        _try("hidden-by-path", lambda: open({str(HIDDEN)!r}).read())
        _try("hidden-relative", lambda: open("hidden/probes.py").read())
        _try("hidden-glob", lambda: [open(p).read() for p in _glob.glob("/**/hidden/*.py")])
        _try("server-environ", lambda: open(f"/proc/{{_os.getppid()}}/environ", "rb").read())
        _try("init-environ", lambda: open("/proc/1/environ", "rb").read())
        _try("neighbours", lambda: [open(p).read()[:80] for p in _glob.glob("../*/*/*.py")])
        _try("write-outside", lambda: open({str(outside)!r}, "w").write("pwned"))
        _try("network", lambda: _socket.create_connection(("127.0.0.1", {port}), timeout=1))
        _try("fork", lambda: _os.fork())
        if _os.path.isdir("hidden"):
            raise RuntimeError("LEAK " + open(_glob.glob("hidden/*.py")[0]).read()[:3000])
    """)


async def test_agent_edited_code_cannot_escape_and_other_sessions_are_unaffected(tmp_path):
    admin, other = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    outside = tmp_path / "pwned.txt"
    env = {"METASRE_ADMIN_TOKEN": admin, "METASRE_E2E_SECRET": other}
    async with (
        metasre_serve("--no-store", env=env) as served,
        MetasreClient(served.address, admin_token=admin) as client,
    ):
        port = int(served.address.rpartition(":")[2])
        a_session = await client.create_session(PAY, seats=["a"])
        b_session = await client.create_session(PAY, seed=1, seats=["b"])
        a = client.agent(a_session.id, a_session.tokens["a"])
        b = client.agent(b_session.id, b_session.tokens["b"])
        await a.join()
        await b.join()

        b_calls = [
            ("run_tests", {"suite": "unit"}),
            ("read_logs", {"service": "payment-service"}),
            ("run_tests", {"suite": "integration"}),
            *pay_solution(1),
        ]

        async def play_b() -> list[tuple[str, bool]]:
            out = []
            for tool, args in b_calls:
                result = await b.call(tool, args)
                out.append((result.text, result.ok))
            return out

        async def play_a() -> tuple[str, str]:
            view = await a.call("view_file", {"path": "payment_service/handlers.py"})
            end = int(view.data["total_lines"]) + 1
            edit = await a.call(
                "edit_lines",
                {
                    "path": "payment_service/handlers.py",
                    "action": "insert",
                    "start_line": end,
                    "content": attack(port, outside),
                },
            )
            assert edit.ok, edit.text
            unit = await a.call("run_tests", {"suite": "unit"})
            integration = await a.call("run_tests", {"suite": "integration"})
            return unit.text, integration.text

        (unit, integration), b_results = await asyncio.gather(play_a(), play_b())

        for text in (unit, integration):
            assert "sandbox_violation" in text, text[:2000]
            for secret in (admin, other, *HIDDEN_LINES):
                assert secret not in text
            assert "ESCAPED" not in text
            assert "BLOCKED hidden-by-path SandboxViolation" in text
        assert not outside.exists()

        # A ends the episode: the grading run has the hidden checks in its folder, and the
        # planted code raises with their text. The grade must not repeat it.
        rollback, report = pay_solution(0)
        await a.call(*rollback)
        final = await a.call(*report)
        assert final.done
        grade = await client.get_grade(a_session.id)
        assert grade["grade"]["final"]
        for secret in (admin, other, HIDDEN_LINES[0]):
            assert secret not in str(grade) and secret not in str(a.inbox.episode_end)

        # B was untouched: the same results as a fresh simulator, and a resolved grade.
        episode = Episode.make(PAY, 1)
        expected = [(s.output.text, s.ok) for s in (episode.apply("b", t, x) for t, x in b_calls)]
        assert b_results == expected
        b_grade = await client.get_grade(b_session.id)
        assert b_grade["grade"]["resolved"] is True

        async with grpc.aio.insecure_channel(served.address) as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest()
            )
            assert health.status == health_pb2.HealthCheckResponse.SERVING
        await a.close()
        await b.close()
        assert await served.stop() == 0
