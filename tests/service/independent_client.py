"""An independent client: stubs built from the .proto files alone, one session played end to end.

Run by test_independent_client.py as `python -I -S independent_client.py SITE PROTOS ADDRESS
PLAN`. With no site processing, neither the project's package (an editable install is a .pth
file) nor its generated modules can be imported: only what SITE holds (grpcio, protobuf,
grpcio-tools, googleapis-common-protos), and the stubs protoc makes here from PROTOS into a
temporary folder. PLAN (JSON) is the scenario, seed and calls to send. It prints one JSON object:
where its stubs came from, each call's result and the grade.
"""

import json
import pathlib
import queue
import sys
import tempfile


def build_stubs(protos: pathlib.Path, out: str) -> None:
    """protoc, as any Python user of the contract would run it."""
    import grpc_tools
    from grpc_tools import protoc

    well_known = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    files = sorted(str(p.relative_to(protos)) for p in (protos / "metasre" / "v1").glob("*.proto"))
    status = protoc.main(
        [
            "protoc",
            f"-I{protos}",
            f"-I{protos / 'third_party' / 'googleapis'}",
            f"-I{well_known}",
            f"--python_out={out}",
            f"--grpc_python_out={out}",
            *files,
        ]
    )
    if status != 0:
        raise SystemExit(f"protoc failed with {status}")


def main() -> None:
    site, protos, address, plan_json = sys.argv[1:5]
    out = tempfile.mkdtemp(prefix="metasre-stubs-")
    sys.path[:0] = [out, site]
    build_stubs(pathlib.Path(protos), out)

    import grpc
    from google.protobuf import json_format, struct_pb2

    from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

    stubs = [m.__file__ for m in (agent_pb2, agent_pb2_grpc, control_pb2, control_pb2_grpc)]
    project = [name for name in sys.modules if name.startswith("metasre.") and ".v1" not in name]
    plan = json.loads(plan_json)

    def args(data: dict) -> struct_pb2.Struct:
        s = struct_pb2.Struct()
        s.update(data)
        return s

    channel = grpc.insecure_channel(address)
    control = control_pb2_grpc.ControlServiceStub(channel)
    agents = agent_pb2_grpc.AgentServiceStub(channel)
    created = control.CreateSession(
        control_pb2.CreateSessionRequest(
            scenario_id=plan["scenario"],
            seed=plan["seed"],
            seats=[common_pb2.SeatConfig(agent_id="solo", role="solo")],
        )
    )
    session_id = created.session.session_id
    join_token = created.tokens[0].join_token
    owner = (("authorization", f"Bearer {created.owner_token}"),)
    calls = plan["calls"]
    results = []

    # The first call over unary CallTool, the way the simplest client plays.
    tool, call_args = calls[0]
    reply = agents.CallTool(
        agent_pb2.CallToolRequest(
            session_id=session_id,
            token=join_token,
            call=agent_pb2.ToolCall(call_id="call-0", tool=tool, args=args(call_args)),
        )
    )
    results.append({"tool": tool, "ok": reply.result.ok, "tick": reply.result.tick})

    # The rest over a Connect stream: join, then one call at a time, reading until its answer.
    requests: queue.Queue = queue.Queue()
    requests.put(
        agent_pb2.ConnectRequest(
            join=agent_pb2.JoinSeat(session_id=session_id, join_token=join_token)
        )
    )
    responses = agents.Connect(iter(requests.get, None))
    first = next(responses)
    if first.WhichOneof("response") != "joined":
        raise SystemExit(f"join refused: {first}")
    for n, (tool, call_args) in enumerate(calls[1:], start=1):
        call_id = f"call-{n}"
        requests.put(
            agent_pb2.ConnectRequest(
                call=agent_pb2.ToolCall(call_id=call_id, tool=tool, args=args(call_args))
            )
        )
        for response in responses:
            kind = response.WhichOneof("response")
            if kind == "error" and response.call_id == call_id:
                raise SystemExit(f"{tool} refused: {response.error}")
            if kind == "result" and response.call_id == call_id:
                r = response.result
                results.append({"tool": tool, "ok": r.ok, "tick": r.tick, "text": r.text})
                break
    requests.put(None)  # half-close: the server ends the stream
    for _ in responses:
        pass

    grade = control.GetGrade(control_pb2.GetGradeRequest(session_id=session_id), metadata=owner)
    channel.close()
    print(
        json.dumps(
            {
                "stubs": stubs,
                "project_modules": project,
                "results": results,
                "grade": json_format.MessageToDict(grade, preserving_proto_field_name=True),
            }
        )
    )


if __name__ == "__main__":
    main()
