import pytest

from metasre.simulator.report import locations_match, normalize_location


@pytest.mark.parametrize(
    ("claimed", "truth"),
    [
        ("ad_ranking/ranker.py", "ad_ranking/ranker.py"),
        ("./ad_ranking/ranker.py:42", "ad_ranking/ranker.py"),
        ("/ad_ranking/ranker.py:40-44", "ad_ranking/ranker.py"),
        ("Deployment:payment-service@v2.4.2", "deployment:payment-service@v2.4.2"),
        ("0042_add_fk", "migration:0042_add_fk"),
        ("auth-service", "service:auth-service"),
    ],
    ids=lambda v: v,
)
def test_equivalent_spellings_match(claimed, truth):
    assert locations_match(claimed, truth)


@pytest.mark.parametrize(
    ("claimed", "truth"),
    [
        ("ad_ranking/ranker.py capi_pipeline/normalize.py", "ad_ranking/ranker.py"),
        ("ad_ranking", "ad_ranking/ranker.py"),
        ("deployment:payment-service@v2.4.1", "deployment:payment-service@v2.4.2"),
        ("../../etc/passwd", "ad_ranking/ranker.py"),
    ],
    ids=lambda v: v,
)
def test_other_locations_do_not_match(claimed, truth):
    assert not locations_match(claimed, truth)


def test_normalize_keeps_typed_locations_typed():
    assert normalize_location(" MIGRATION: 0042_x ") == "migration:0042_x"


def test_the_report_s_vocabulary_is_written_once():
    """Each category, remediation and metric is spelled once, in its Literal; the tuples of
    them are derived from it (a tuple written beside its Literal drifts from it)."""
    import ast
    from pathlib import Path

    from metasre.simulator.scenarios import spec

    tree = ast.parse(Path(spec.__file__).read_text())
    spelled: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and node.value is not None:
                spelled[target.id] = [
                    n.value
                    for n in ast.walk(node.value)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                ]
    for literal, derived in (
        ("Category", "CATEGORIES"),
        ("Remediation", "REMEDIATIONS"),
        ("Metric", "METRICS"),
    ):
        assert spelled[derived] == [], f"{derived} spells its words again"
        assert list(getattr(spec, derived)) == spelled[literal]
    assert len(spec.CATEGORIES) == 18 and len(spec.REMEDIATIONS) == 12
