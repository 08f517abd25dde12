"""Sandboxed test execution: agent-edited code runs in a limited child process."""
