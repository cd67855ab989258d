"""Types that say what the calls return (mypy --strict users rely on them)."""

from __future__ import annotations

import inspect

import liblock


def test_election_calls_are_typed() -> None:
    ann = {name: str(inspect.unwrap(getattr(liblock.Client, name)).__annotations__["return"])
           for name in ("leader", "leader_async", "campaign", "campaign_async")}
    assert ann["leader"] == "Optional[Leader]", ann
    assert ann["leader_async"] == "Optional[Leader]", ann
    assert ann["campaign"] == "Leadership", ann
    assert ann["campaign_async"] == "Leadership", ann
