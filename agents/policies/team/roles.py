"""A team of the scenario's roles: each seat plays within its view (`RoleSeatPlay`).

A scenario that declares roles (a team family) gets one seat per role, and the server gives
each seat its role's view: some services' signals, with or without the code, the data layer and
the deploy system. Each seat reads what only it can see first, follows blame toward what its
services call, and acts on what it finds: it fixes a fault its view and tools reach, hands a
fault it cannot fix to the seat that can (FINDING), and tells the seats that see a service it
cannot that one of its services blames it (LEAD). Seats work side by side: under SIMULTANEOUS
two seats remedy two faults in the same round, and a seat that waits spends its turns on the
reads a lead will send it to. Once every seat has said DONE after the work it was sent and
every fault is FIXED, the reporter files the report naming the fault that explains the page's
first alert.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..evidence import Finding, read_finding
from ..expert import Diagnosis, ExpertPolicy
from .board import CUE_CHARS, Board, Note, brief, note_line
from .callers import WAIT_SECONDS, Look, RoleCaller, on_threads
from .seats import CODE_REMEDY, REMEDY, RoleSeat, reporter_of

MAX_LOOKS = 8
"""Services a seat reads the logs of before it stops looking (the expert's limit)."""


class RoleSeatPlay:
    """One seat of a role team, playing within its view; see `play_role_team`."""

    def __init__(
        self,
        call: RoleCaller,
        me: RoleSeat,
        team: Sequence[RoleSeat],
        reporter: str,
        tools: Mapping[str, Mapping[str, Any]],
    ) -> None:
        self.call = call
        self.me = me
        self.tools = tools
        """The server's tools by name, as ListTools serves them."""
        self.others = [s for s in team if s.name != me.name]
        self.reporter = reporter
        self.board = Board(call)
        self.expert = ExpertPolicy()
        self.health: dict[str, str] = {}
        self.deps: dict[str, list[str]] = {}
        self.names: list[str] = []
        self.queue: list[str] = []
        self.visible: list[str] = []
        """The services this seat sees, in the order it would read them."""
        self.seen: list[str] = []
        self.leads_sent: set[str] = set()
        self.leads_taken = 0
        self.jobs_taken = 0
        self.page: list[Mapping[str, Any]] = []
        """The alerts this seat was paged with."""
        self.findings: dict[str, Finding] = {}
        """What each service's log said, once read."""
        self.ranks: dict[str, list[Any]] = {}
        """Per service a teammate led this seat to: the rank of the alert its lead explained."""
        self.found: list[Diagnosis] = []
        """Faults this seat fixed, oldest first."""
        self.fixed_bodies: list[Mapping[str, Any]] = []
        """What this seat said of each (its FIXED notes)."""
        self.addressed: dict[str, int] = {}
        """Teammate -> the inbox position of the last message before this seat last sent it
        work (a LEAD or FINDING): its DONE must come after that."""
        self.sent = 0
        """How many messages this seat has sent."""
        self.addressed_sent: dict[str, int] = {}
        """Teammate -> how many messages this seat had sent when it last sent it work: its DONE
        must say it read that many."""
        self.watched: set[str] = set()
        """The looks taken while waiting."""

    # -- the seat's loop --------------------------------------------------------------------

    def run(self) -> None:
        """Investigate, fix or hand over, say DONE; the reporter files once all is fixed."""
        self._triage()
        busy = True
        answered = -1  # the inbox position of the last work for this seat its DONE covers
        while True:
            self.board.update()
            if self._work():
                busy = True
                continue
            # Work sent after this seat's DONE that it could not take (a lead outside its view,
            # a service already read) still needs a DONE that says it was read: the sender
            # waits for one.
            mine = [n.position for n in self.board.notes if self.me.name in _work_for(n)]
            if mine and max(mine) > answered:
                busy = True
                answered = max(mine)
            if busy:
                # Said again after each spell of work, so teammates know it came after theirs.
                self._say(
                    "DONE",
                    {
                        "fixed": [d.service for d in self.found],
                        "read": dict(self.board.read_from),
                    },
                    "Nothing more here.",
                )
                busy = False
                continue
            if self._finished():
                if self.me.name == self.reporter:
                    self._report()
                return
            if not self.call.wait_inbox(self.board.heard, WAIT_SECONDS, self._filler):
                if self.me.name == self.reporter and not self.call.over:
                    self._report()  # the teammates went quiet: report what is known
                return

    def _work(self) -> bool:
        """Take the next piece of work: a fault handed over, a lead, a look; False if none."""
        findings = self.board.of("FINDING")
        for note in findings[self.jobs_taken :]:
            self.jobs_taken += 1
            service = str(note.body.get("service", ""))
            done = {d.service for d in self.found} | {
                str(n.body.get("service")) for n in self.board.of("FIXED")
            }
            # A fault this seat claimed at the moment a teammate handed it over is fixed once.
            if note.body.get("fixer") == self.me.name and service not in done:
                self._fix(_diagnosis(note.body))
                return True
        for note in self.board.of("LEAD")[self.leads_taken :]:
            self.leads_taken += 1
            service = str(note.body.get("service", ""))
            rank = note.body.get("page")
            if isinstance(rank, list) and len(rank) == 2:
                self.ranks[service] = min(self.ranks.get(service, NO_PAGE), rank)
            if self.me.view.sees(service) and service not in self.seen:
                self.queue.insert(0, service)
        # A service a teammate led from has been read: what it blames is known.
        taken = self.board.taken() | {str(n.body.get("blamed_by")) for n in self.board.of("LEAD")}
        while self.queue and len(self.seen) < MAX_LOOKS:
            service = self.queue.pop(0)
            if service in self.seen or service in taken:
                continue
            self._look(service)
            return True
        return False

    def _finished(self) -> bool:
        """Every seat said DONE after the work it was sent, and every fault is fixed."""
        for seat in self.others:
            # after the work this seat sent it and the work any teammate sent it
            since = max(
                [
                    self.addressed.get(seat.name, -1),
                    *(n.position for n in self.board.notes if seat.name in _work_for(n)),
                ]
            )
            sent = self.addressed_sent.get(seat.name, 0)
            if not self.board.done_after(seat.name, since, self.me.name, sent):
                return False
        fixed = {str(n.body.get("service")) for n in self.board.of("FIXED")}
        fixed |= {d.service for d in self.found}
        pending = [
            str(n.body.get("service")) for n in self.board.notes if n.kind in ("CLAIM", "FINDING")
        ]
        return all(s in fixed for s in pending)

    # -- investigation ----------------------------------------------------------------------

    def _triage(self) -> None:
        """The suspects this seat can see, deepest first, from its dashboard."""
        observation = self.call.observation
        rows = [r for r in observation.get("services", ()) if self.me.view.sees(str(r["name"]))]
        if rows:
            graph = [
                {"service": r["name"], "health": r["health"], "depends_on": r["depends_on"]}
                for r in rows
            ]
        else:
            reply = self.call("check_dependencies", {})
            graph = [
                r
                for r in reply.data.get("services", ())
                if reply.ok
                if self.me.view.sees(str(r["service"]))
            ]
        self.health = {str(r["service"]): str(r["health"]) for r in graph}
        self.deps = {str(r["service"]): [str(d) for d in r["depends_on"]] for r in graph}
        names = list(self.health)
        for row in graph:
            names += [str(d) for d in row["depends_on"]]
        for seat in (self.me, *self.others):
            names += list(seat.view.services or ())
        self.names = sorted(set(names))
        alerts = [a for a in observation.get("alerts", ()) if self.me.view.sees(str(a["service"]))]
        self.page = alerts
        suspects: list[str] = []
        for a in alerts:
            if a["service"] in self.health and a["service"] not in suspects:
                suspects.append(str(a["service"]))
        suspects += [
            s for s in sorted(self.health) if self.health[s] != "healthy" and s not in suspects
        ]
        # What only this seat can see comes first: the shared services are every seat's to read.
        deepest = ExpertPolicy._deepest_first(suspects, self.deps)
        self.queue = sorted(deepest, key=self._shared)
        self.visible = sorted(self.health, key=lambda s: (self._shared(s), s not in suspects))

    def _shared(self, service: str) -> bool:
        """Whether a teammate sees `service` too."""
        return any(o.view.sees(service) for o in self.others)

    def _look(self, service: str) -> None:
        """Read `service`'s logs; follow its blame, pass on a lead, or act on a fault."""
        self.seen.append(service)
        reply = self.call("read_logs", {"service": service, "level": "WARN", "lines": 80})
        lines = [str(r["text"]) for r in reply.data.get("lines", ())] if reply.ok else []
        finding = self.findings[service] = read_finding(service, lines, self.names)
        below = [m for m in finding.mentions if m in self.deps.get(service, ())]
        # Faults flow up the graph: a service blaming what it calls is a symptom.
        visible = [m for m in below if self.me.view.sees(m) and m not in self.seen]
        if visible:
            self.queue = visible + [s for s in self.queue if s not in visible]
            return
        # What it calls out of this seat's sight is a teammate's to read; so is any service a
        # log with no failure of its own names (an edge naming the backend that fails). A
        # failing service's log names others too (its callers, a table called like a
        # service): those are no lead.
        hidden = [
            m
            for m in finding.mentions
            if not self.me.view.sees(m) and (m in below or finding.category is None)
        ]
        self._lead(hidden, service, finding.category, finding.cue or (lines[-1] if lines else ""))
        known = self.board.taken() | {d.service for d in self.found}
        if hidden or any(m in known for m in below) or finding.category is None:
            return
        self._act(Diagnosis(service, finding.category, finding.cue or "", evidence=lines))

    def _lead(
        self, services: Sequence[str], blamed_by: str, category: str | None, cue: str
    ) -> None:
        """Tell the seats that see `services` that `blamed_by` blames them, in one message.

        Not for a service a teammate is already on, or was already led to.
        """
        known = self.board.taken() | {str(n.body.get("service")) for n in self.board.of("LEAD")}
        lines: list[str] = []
        led: list[str] = []
        work_for: list[str] = []
        for service in services:
            to = [s.name for s in self.others if s.view.sees(service)]
            if service in self.leads_sent or service in known or not to:
                continue
            self.leads_sent.add(service)
            work_for += [t for t in to if t not in work_for]
            body = {
                "service": service,
                "blamed_by": blamed_by,
                "category": category,
                "cue": cue[:CUE_CHARS],
                "to": to,
                "page": self._rank_of(service),
            }
            lines.append(note_line("LEAD", body))
            led.append(service)
        if not lines:
            return
        kind = f" {category.replace('_', ' ')}?" if category else ""
        note = (
            f"{blamed_by} is failing and blames {', '.join(led)}, which I cannot see.{kind} "
            f"Evidence: {cue.strip()[:160]}"
        )
        self._send("\n".join([note, *lines]), work_for)

    def _act(self, d: Diagnosis) -> None:
        """Fix a fault this seat can fix; hand it to a teammate who can otherwise."""
        if self.me.can_fix(d.service, d.category, self.tools):
            if not any(s.can_fix(d.service, d.category, self.tools) for s in self.others):
                self._fix(d)  # nobody else could take it: no need to claim it first
                return
            self._say(
                "CLAIM",
                {"service": d.service, "category": d.category},
                f"{d.service} is failing ({d.category}): I am on it.",
            )
            self.board.update()
            mine = [s.name for s in (self.me, *self.others)].index(self.me.name)
            rivals = [
                n
                for n in self.board.of("CLAIM")
                if n.body.get("service") == d.service
                and any(s.name == n.sender for s in self.others[:mine])
            ]
            if not rivals:  # an earlier seat claimed the same fault at the same time
                self._fix(d)
            return
        fixers = [s for s in self.others if s.can_fix(d.service, d.category, self.tools)] or [
            s for s in self.others if s.view.sees(d.service)
        ]
        if not fixers:
            self._fix(d)  # nobody else could either: try within this view
            return
        fixer = fixers[0].name
        tool = REMEDY.get(d.category, CODE_REMEDY)
        self._say(
            "FINDING",
            {
                "service": d.service,
                "category": d.category,
                "cue": d.cue[:CUE_CHARS],
                "evidence": brief(d.evidence),
                "fixer": fixer,
            },
            f"{d.service} is failing: {d.category.replace('_', ' ')}? {fixer}, you can "
            f"{tool} there and I cannot. Evidence: {d.cue.strip()[:160]}",
            work_for=[fixer],
        )

    def _fix(self, d: Diagnosis) -> None:
        """Apply the remedy (the expert's), then say what was done."""
        # The expert asks for the platform's services (check_dependencies) when it did not
        # diagnose the fault itself; this seat knows them from its triage: one call less.
        self.expert._services = self.expert._services or list(self.names)
        self.expert.remediate(self.call, d)
        self.found.append(d)
        body = {
            "service": d.service,
            "category": d.category,
            "cue": d.cue[:CUE_CHARS],
            "location": d.location,
            "remediation": d.remediation,
            "page": min(self._rank_of(d.service), self.ranks.get(d.service, NO_PAGE)),
        }
        self.fixed_bodies.append(body)
        self._say(
            "FIXED", body, f"Applied {d.remediation or 'no remedy'} on {d.location or d.service}."
        )

    def _rank_of(self, root: str) -> list[Any]:
        """The rank of the first alert of this seat's page that a fault at `root` explains.

        That is the root's own alert, or one of a service that blamed it (directly or through
        others).
        """
        chain = {root}
        grew = True
        while grew:
            more = {
                s for s, f in self.findings.items() if s not in chain and chain & set(f.mentions)
            }
            chain |= more
            grew = bool(more)
        return min((_rank(a) for a in self.page if str(a["service"]) in chain), default=NO_PAGE)

    def _filler(self) -> Look | None:
        """A useful look for a turn this seat holds while it waits for its teammates.

        First the logs of the services it sees and has not read, what only it sees first (a
        teammate's lead will send it to one of them: the read is then at hand, remembered by
        the caller), then the error rate of a fault a teammate is fixing where it can see.
        """
        self.board.update()
        taken = self.board.taken()
        for service in self.visible:
            if service not in self.seen and service not in taken and service not in self.watched:
                self.watched.add(service)
                return ("read_logs", {"service": service, "level": "WARN", "lines": 80})
        for n in self.board.notes:
            service = str(n.body.get("service", ""))
            key = f"metrics:{service}"
            fixing = n.kind in ("CLAIM", "FINDING") and self.me.view.sees(service)
            if fixing and key not in self.watched:
                self.watched.add(key)
                return ("query_metrics", {"service": service, "metric": "error_rate"})
        return None

    def _say(
        self, kind: str, body: Mapping[str, Any], note: str, work_for: Sequence[str] = ()
    ) -> None:
        self._send(f"{note}\n{note_line(kind, body)}", work_for)

    def _send(self, text: str, work_for: Sequence[str]) -> None:
        # Everything goes to every teammate: the reporter tracks the whole team's state.
        self.call("send_message", {"text": text, "to": [s.name for s in self.others]})
        self.sent += 1
        heard = self.board.update()
        for seat in work_for:
            self.addressed[seat] = heard - 1
            self.addressed_sent[seat] = self.sent

    # -- the report -------------------------------------------------------------------------

    def _report(self) -> None:
        fixed = [n.body for n in self.board.of("FIXED")] + self.fixed_bodies
        if not fixed:
            alerts = list(self.call.observation.get("alerts", ()))
            service = str(alerts[0]["service"]) if alerts else (self.names or ["unknown"])[0]
            guess = Diagnosis(service, "code_bug", "no evidence", "unknown", "code_fix")
            ExpertPolicy.report(self.call, guess)
            return
        first = primary(fixed)
        further = [_diagnosis(f) for f in fixed if f is not first]
        ExpertPolicy.report(self.call, _diagnosis(first), further)


NO_PAGE: list[Any] = ["P9", 0.0]
"""The rank of a fault that explains no alert: after every alert's."""


def _rank(alert: Mapping[str, Any]) -> list[Any]:
    """An alert's place on the page: most severe first, then the oldest (as get_alerts)."""
    if "firing_minutes" in alert:
        return [str(alert.get("severity", "P9")), -float(alert["firing_minutes"])]
    return [str(alert.get("severity", "P9")), float(alert.get("since_minute", 0.0))]


def primary(fixed: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The fault a report names among those fixed (FIXED bodies).

    The one that explains the first alert of the page (most severe, then oldest), as the
    expert chooses; else the first fixed.
    """
    return min(fixed, key=lambda f: _page_rank(f.get("page")))


def _page_rank(rank: Any) -> tuple[str, float]:
    if isinstance(rank, list) and len(rank) == 2:
        return (str(rank[0]), float(rank[1]))
    return ("P9", 0.0)


def _work_for(note: Note) -> list[str]:
    """The seats a note gives work to: a FINDING's fixer, a LEAD's seats."""
    if note.kind == "FINDING":
        return [str(note.body.get("fixer", ""))]
    if note.kind == "LEAD":
        return [str(s) for s in note.body.get("to", ())]
    return []


def _diagnosis(body: Mapping[str, Any]) -> Diagnosis:
    return Diagnosis(
        str(body.get("service", "")),
        str(body.get("category", "")),
        str(body.get("cue", "")),
        str(body.get("location", "")),
        str(body.get("remediation", "")),
        [str(line) for line in body.get("evidence", ())],
    )


def play_role_team(
    callers: Mapping[str, RoleCaller],
    seats: Sequence[RoleSeat],
    on_done: Callable[[str], None] | None = None,
    *,
    tools: Sequence[Mapping[str, Any]],
) -> None:
    """Play one episode with one seat per scenario role, each on its own thread.

    Each seat investigates what its view shows, fixes what it can, hands the rest to a
    teammate who can (messages of `board.KINDS`), and says DONE; the reporter (`reporter_of`)
    files the report once every seat is done and every fault fixed. `on_done(name)`: called
    as a seat's play ends (to hang it up, so that SIMULTANEOUS rounds stop waiting for it).
    `tools`: the server's tools as ListTools serves them (what each remedy needs of a view).
    """
    reporter = reporter_of(seats)
    by_name = {s.name: s for s in seats}
    served = {str(t["name"]): t for t in tools}

    def play(name: str) -> None:
        try:
            RoleSeatPlay(callers[name], by_name[name], seats, reporter, served).run()
        finally:
            if on_done is not None:
                on_done(name)

    on_threads([s.name for s in seats], play)


__all__ = ["MAX_LOOKS", "RoleSeatPlay", "play_role_team", "primary"]
