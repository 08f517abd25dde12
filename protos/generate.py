"""Generate the metasre.v1 stubs beside the protos: ``python protos/generate.py``.

A development tool, not part of the installed package (the runtime only needs the stubs).

The one way the committed ``*_pb2.py``, ``*_pb2.pyi`` and ``*_pb2_grpc.py`` files are made; it
needs the pinned grpcio-tools of the dev extras. A test regenerates into a temporary folder and
compares bytes, so stale stubs fail.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

PROTO_ROOT = Path(__file__).resolve().parent
"""The include root: the protos live in PROTO_ROOT/metasre/v1, as their package says."""
PACKAGE_DIR = PROTO_ROOT / "metasre" / "v1"
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")


def proto_files() -> list[Path]:
    """The protocol's .proto files, sorted."""
    return sorted(PACKAGE_DIR.glob("*.proto"))


def generate(out_root: Path) -> list[Path]:
    """Run protoc over the protos, writing ``out_root/metasre/v1/*_pb2*``; returns the files.

    Raises:
        RuntimeError: protoc failed; the message holds its exit code.
    """
    import google.rpc  # the googleapis-common-protos .proto files live beside its modules
    from grpc_tools import protoc  # dev-only dependency, imported when generating

    well_known = resources.files("grpc_tools") / "_proto"
    googleapis = Path(next(iter(google.rpc.__path__))).parent.parent
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{well_known}",
        f"-I{googleapis}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        *(str(p.relative_to(PROTO_ROOT)) for p in proto_files()),
    ]
    out_root.mkdir(parents=True, exist_ok=True)
    code = protoc.main(args)
    if code != 0:
        raise RuntimeError(f"protoc exited with {code}; see its messages above")
    out_dir = out_root / "metasre" / "v1"
    return sorted(p for p in out_dir.iterdir() if p.name.endswith(GENERATED_SUFFIXES))


def main() -> int:
    """Regenerate the committed stubs in place."""
    written = generate(PROTO_ROOT)
    for path in written:
        print(path.relative_to(PROTO_ROOT.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
