"""Accelerators: state a visible helper carries from one run to the next, to go faster.

Off for grader runners, which carry nothing between runs; ``tests/simulator/
test_accelerate_switch.py`` proves that on and off give the same reports.
"""
