"""The load tester behind `python -m tools.loadtest`: bots that play real tables over real websockets.

- `tools.loadtest.fixtures`: accounts, sessions and tables made directly in the database the site shares
  (`prepare`, `close_tables`), and the loopback-only URL check (`check_loopback`).
- `tools.loadtest.bot`: `next_action(state, seat, strategy, ...)`, the bot's decision on one JSON `state`
  message (basic strategy from the engine), and `Bot`, one websocket client that plays a seat.
- `tools.loadtest.stats`: `Recorder` (latencies, counts, errors) and `percentiles`.
- `tools.loadtest.runner`: `run(config, fixture)`, which connects every bot, plays for the configured time,
  lets the rounds under way finish, makes the bots leave, and returns the `Recorder`.
"""
