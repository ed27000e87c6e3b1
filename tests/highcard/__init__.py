"""High card: a game that exists only for the tests, the proof that a game is a plug-in of the site.

Each seated player stakes the table's stake and draws one card of a provably fair deck; the highest card
(rank, then suit) takes the pot. It is an app of its own (`tests.highcard`), installed only in the servers its
test starts (`tests.highcard.settings`), and registers itself with the site like any game
(`apps.HighCardConfig.ready`): the lobby, the URLs, the socket, the runtime's loop, lease, fence and fan-out,
the wallet and the chat come from the site. No file outside this folder names it.
"""
