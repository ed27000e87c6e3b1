"""Hand history, leaderboards, round replay, fairness verification and player statistics.

- `records`: the rows written at settlement (`PlayerRound`, `Mistake`) and the running totals kept beside them
  (`PlayerStats`, `PeriodStats`), so every page reads a few indexed rows instead of scanning rounds.
- `recording.record_round(round=..., state=...)`: writes them for one settled round (idempotent).
- `coach`: compares each decision of the action log with the engine's basic strategy and prices it.
- `replay`: rebuilds a round step by step with the engine, showing only the cards dealt in it.
- `selectors`: leaderboards, history queries and profile statistics; `charts`: server-drawn SVG.
"""
