"""The run_tests tool: a visible suite against the episode's current code, in the sandbox."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Args, Output, Tool, ToolContext, ToolOutput

SUITE_MINUTES = {"unit": 1.0, "integration": 2.0, "load": 3.0, "security": 2.0}


class RunTestsArgs(Args):
    """Arguments of run_tests."""

    suite: Literal["unit", "integration", "load", "security"] = Field(
        description="Which suite: unit (fast, per function), integration (end to end across "
        "services), load (many concurrent requests), security (data exposure)."
    )
    path: str | None = Field(
        None, max_length=512, description="Only the suite's test files under this path."
    )


def run_tests(ctx: ToolContext, args: RunTestsArgs) -> ToolOutput:
    """Run a visible test suite on the current code."""
    report, files = ctx.run_visible_suite(args.suite, args.path)
    minutes = SUITE_MINUTES[args.suite]
    if not files:
        return ToolOutput(
            text=f"no {args.suite} tests" + (f" under {args.path}" if args.path else ""),
            data={"suite": args.suite, "files": []},
            error="no_tests",
            minutes=minutes,
        )
    failed = report.failed + report.errors
    lines = [
        f"{args.suite} suite: {report.passed} passed, {failed} failed"
        + ("" if report.status == "completed" else f" ({report.status}: {report.message})")
    ]
    for o in report.outcomes:
        mark = "PASS" if o.status == "passed" else o.status.upper()
        lines.append(f"  {mark:<6} {o.test_id}" + (f"  -- {o.message}" if o.message else ""))
    for o in [o for o in report.outcomes if o.status != "passed"][:3]:
        if o.traceback:
            lines.append(f"--- {o.test_id}\n{o.traceback.rstrip()}")
    if report.output.strip():
        lines.append("--- output\n" + report.output.rstrip()[-1500:])
    return ToolOutput(
        text="\n".join(lines),
        data={
            "suite": args.suite,
            "status": report.status,
            "message": report.message,
            "passed": report.passed,
            "failed": failed,
            "ok": report.ok,
            "files": files,
            "outcomes": [
                {"test_id": o.test_id, "status": o.status, "message": o.message}
                for o in report.outcomes
            ],
        },
        minutes=minutes,
        command=args.suite,
    )


class NoTestsRefusal(Output):
    """A run that found no tests of the suite (under the path, if one was given)."""

    suite: str = Field(description="The suite asked for.")
    files: list[str] = Field(description="Always empty.")


class SuiteOutcome(Output):
    """One test's outcome."""

    test_id: str = Field(description="The test's id (file::name).")
    status: Literal["passed", "failed", "error"] = Field(description="How it ended.")
    message: str = Field(description="Why it failed ('' when it passed).")


class RunTestsOutput(Output):
    """What run_tests returns."""

    suite: str = Field(description="The suite run.")
    status: Literal["completed", "collection_error", "timeout", "crashed", "sandbox_violation"] = (
        Field(description="How the run ended.")
    )
    message: str = Field(description="Why, when the run did not complete.")
    passed: int = Field(description="Tests that passed.")
    failed: int = Field(description="Tests that failed or errored.")
    ok: bool = Field(description="The run completed and nothing failed.")
    files: list[str] = Field(description="The test files run.")
    outcomes: list[SuiteOutcome] = Field(description="Each test's outcome.")


TOOLS = (
    Tool(
        "run_tests",
        "Run one visible test suite against the current code in a sandbox and "
        "report each test. Pick the suite that exercises the failure: unit tests pass on some "
        "bugs that only the integration, load or security suite reveals.",
        RunTestsArgs,
        1.0,
        "investigate",
        run_tests,
        output=RunTestsOutput,
        refusals=(NoTestsRefusal,),
        needs=frozenset({"code"}),
    ),
)
