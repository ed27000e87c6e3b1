"""Durak bots by level, pure (no Django, no I/O, no clock, no global random): `basic` (the simple policy
`easy` is made of), `normal` (card counting and heuristics), `hard` (determinized Monte Carlo over the unseen
cards) and what a seat may know (`knowledge`). `durak.bot.choose` picks the level."""

from durak.engine.state import GameState, thrower


def actor(state: GameState) -> int | None:
    """Who moves next when bots play each other: the principal attacker leads, the defender answers unbeaten
    cards, then the attacker holding the right to add cards; None when the game is over."""
    if state.finished:
        return None
    if not state.table:
        return state.attacker
    if not state.taking and any(defence is None for _, defence in state.table):
        return state.defender
    return thrower(state)
