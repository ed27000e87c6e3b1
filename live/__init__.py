"""The live runtime: every live table (blackjack, Durak) is an actor owned by one process (`live.actor`),
named by `live.process`, holding a lease (`live.lease`); commands reach it from other processes through
`live.forward`."""
