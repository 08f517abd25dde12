import pytest

from metasre.simulator.scenarios.render import Renderer, draw_values


def test_draws_are_reproducible_and_seed_dependent():
    variables = {"b": [1, 2, 3, 4, 5, 6, 7, 8], "a": ["x", "y", "z", "w"]}
    first = draw_values("meta-sre/x-v1", 3, variables)
    assert first == draw_values("meta-sre/x-v1", 3, variables)
    assert (
        len({tuple(sorted(draw_values("meta-sre/x-v1", s, variables).items())) for s in range(20)})
        > 5
    )


def test_a_whole_template_keeps_the_value_type_and_text_templates_become_strings():
    r = Renderer({"n": 4, "release": {"bad": "v2.4.2", "good": "v2.4.1"}})
    assert r.data({"replicas": "{{n}}", "msg": "x{{ n }}y", "v": ["{{release.bad}}"]}) == {
        "replicas": 4,
        "msg": "x4y",
        "v": ["v2.4.2"],
    }
    assert r.text("{{release.good}}") == "v2.4.1"


def test_unknown_template_names_are_errors_that_list_the_known_names():
    with pytest.raises(ValueError, match=r"\{\{nope\}\} names no variable; known: \['n'\]"):
        Renderer({"n": 1}).text("a {{nope}}")


def test_empty_choices_are_refused():
    with pytest.raises(ValueError, match="non-empty list"):
        draw_values("s", 0, {"x": []})
