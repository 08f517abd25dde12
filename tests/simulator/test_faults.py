import pytest

from metasre.simulator.faults import Fault
from metasre.simulator.scenarios.spec import FaultSpec


def fault(kind="crash_loop", **params):
    return Fault(
        FaultSpec(
            kind=kind,
            service="svc",
            onset_minutes_ago=10,
            ramp_minutes=2,
            recover_minutes=4,
            params=params,
        )
    )


def test_strength_ramps_up_from_onset_and_stays_full_while_active():
    f = fault()
    assert f.strength(-11) == 0.0
    assert f.strength(-10) == 0.0
    assert f.strength(-9) == pytest.approx(0.5)
    assert f.strength(0) == 1.0
    assert f.active and f.cured_at() is None


def test_cure_decays_over_recover_minutes_and_history_before_it_is_unchanged():
    f = fault()
    f._events.append(type(f._events[0])(2.0, "off"))
    assert f.strength(1.0) == 1.0
    assert f.strength(4.0) == pytest.approx(0.5)
    assert f.strength(6.0) == 0.0
    assert f.cured_at() == 2.0 and not f.active


def test_reset_drops_a_leak_to_zero_and_it_grows_back():
    f = fault("memory_leak", required_replicas=5)
    f.note_restart(1.0)
    assert f.strength(1.0) == 0.0
    assert f.strength(2.0) == pytest.approx(0.5)
    assert f.strength(3.5) == 1.0
    assert f.active


def test_kind_specific_params_are_required():
    with pytest.raises(ValueError, match="needs params"):
        FaultSpec(kind="deployment", service="svc", onset_minutes_ago=1)
