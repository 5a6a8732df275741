"""core.gc_tuning: a served process freezes what start-up made and collects less often;
0 leaves Python's collector alone."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from agentdash.core.gc_tuning import gc_tune


@pytest.fixture
def collector() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_start_up_objects_are_frozen_and_passes_come_less_often(collector: None) -> None:
    gc.unfreeze()
    _, older, oldest = gc.get_threshold()
    made_at_start = [{"kept": n} for n in range(1_000)]
    assert gc_tune(threshold=12_345) is True
    assert gc.get_threshold() == (12_345, older, oldest)
    assert gc.get_freeze_count() >= len(made_at_start)
    assert not any(made_at_start is o for o in gc.get_objects())  # no pass walks them now


def test_zero_leaves_the_collector_as_it_is(collector: None) -> None:
    gc.unfreeze()
    before = gc.get_threshold()
    assert gc_tune(threshold=0) is False
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
