"""`metasre export --format openai|hf|atif` and `metasre llm`'s transcripts: what each seat saw.

The `episodes` format (one line per episode, every seat's calls together) is the store's own
(`metasre.service.episodes`). The seat formats write one line per seat-episode, the seat's
conversation as its model saw it: the transcript `metasre llm` recorded for the seat when a
model played it (`--transcripts`, by default beside the store: metasre.db ->
metasre.transcripts.jsonl), else the conversation `metasre llm` would have had in that seat
(`metasre.agents.transcripts.derived_conversation`). A seat that made no call has no line.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..agents.dialects import atif_trajectory, hf_row, openai_line
from ..agents.llm import LLMPolicy
from ..agents.transcripts import (
    Key,
    append_transcripts,
    derived_conversation,
    read_transcripts,
    transcript,
)
from ..service import SERVER_VERSION
from ..simulator.tools import served_tools
from .connection import Connection
from .errors import OutputError, UsageError
from .serving import local_store

FORMATS = ("episodes", "openai", "hf", "atif")
"""`metasre export --format`: the store's episodes, or one of the seat formats."""
SEAT_FORMATS = FORMATS[1:]
LLM_AGENT = "metasre-llm"
"""The agent name in ATIF documents of seats a model played (`metasre llm`)."""
DERIVED_AGENT = "metasre-derived"
"""The agent name of seats whose conversation is derived (a scripted agent played them)."""


def transcripts_beside(store: Path) -> Path:
    """Where `metasre llm` records transcripts by default: beside the store."""
    return store.with_suffix(".transcripts.jsonl")


def llm_transcripts_path(args: argparse.Namespace) -> Path | None:
    """Where `metasre llm` records its seats' conversations.

    --transcripts, else beside the store of a server it starts itself, else nowhere (a
    --target server keeps its store elsewhere).
    """
    if args.transcripts:
        return Path(args.transcripts)
    store = local_store(args, Connection.from_args(args))
    return transcripts_beside(store) if store is not None else None


def save_transcripts(
    path: Path | None,
    policies: Mapping[str, LLMPolicy],
    *,
    session_id: str,
    episode: int,
    scenario_id: str,
    seed: int,
) -> None:
    """Append each seat's transcript to `path` (nothing when None).

    Raises:
        OutputError: the file cannot be written.
    """
    if path is None:
        return
    records = [
        transcript(
            policy,
            session_id=session_id,
            episode=episode,
            agent_id=agent_id,
            scenario_id=scenario_id,
            seed=seed,
        )
        for agent_id, policy in policies.items()
    ]
    try:
        append_transcripts(path, records)
    except OSError as exc:
        raise OutputError(f"cannot write the transcripts to {path}: {exc.strerror}") from None


def export_transcripts(args: argparse.Namespace, store: Path | None) -> dict[Key, dict[str, Any]]:
    """The transcripts `metasre export` merges: --transcripts, else the file beside the store.

    `store`: the SQLite store's file; None for a PostgreSQL store (nothing is beside it).

    Raises:
        UsageError: --transcripts names a missing or unreadable file, or one that is not
            transcripts.
    """
    if args.transcripts:
        path = Path(args.transcripts)
    elif store is None:
        return {}
    else:
        path = transcripts_beside(store)
    if not path.is_file():
        if args.transcripts:
            raise UsageError(f"--transcripts {path}: no such file (metasre llm writes it)")
        return {}
    try:
        return read_transcripts(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--transcripts: {exc}") from None


def tool_list() -> list[dict[str, Any]]:
    """The tools as ListTools gives them (name, description, input_schema, kind, minutes)."""
    keys = ("name", "description", "input_schema", "kind", "minutes")
    return [{key: tool[key] for key in keys} for tool in served_tools()]


def seat_lines(
    records: Iterable[Mapping[str, Any]],
    fmt: str,
    *,
    split_of: Callable[[Mapping[str, Any]], str | None],
    transcripts: Mapping[Key, Mapping[str, Any]],
) -> Iterator[dict[str, Any]]:
    """One object per seat-episode in `fmt` (openai, hf or atif); see the module docstring.

    `split_of` names an episode's split (train or test; None for a family not known here), for
    the hf rows' split column.
    """
    tools = tool_list()
    for record in records:
        for seat in record["agents"]:
            agent_id = str(seat["agent_id"])
            recorded = transcripts.get((record["session_id"], int(record["episode"]), agent_id))
            conversation: Mapping[str, Any] = (
                {"messages": recorded["messages"], "tools": recorded["tools"]}
                if recorded is not None
                else derived_conversation(record, agent_id, tools)
            )
            if not any(m["role"] == "assistant" for m in conversation["messages"]):
                continue
            if fmt == "openai":
                yield openai_line(conversation)
            elif fmt == "hf":
                yield hf_row(record, agent_id, conversation, split_of(record))
            else:
                yield atif_trajectory(
                    record,
                    agent_id,
                    conversation,
                    agent_name=LLM_AGENT if recorded is not None else DERIVED_AGENT,
                    agent_version=SERVER_VERSION,
                    model=str(recorded.get("model") or "") if recorded is not None else "",
                )


__all__ = [
    "FORMATS",
    "SEAT_FORMATS",
    "export_transcripts",
    "llm_transcripts_path",
    "save_transcripts",
    "seat_lines",
    "tool_list",
    "transcripts_beside",
]
