"""The pure foundation every game's engine stands on: provably fair seeds and shuffles (`cards.fairness`),
the deck checks' command-line options (`cards.verify`), and the one refusal type of the site
(`cards.errors.Refused`). No Django, no I/O, no clock, no global random."""
