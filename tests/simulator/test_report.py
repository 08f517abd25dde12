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
