"""Durak (the Russian "fool" card game): a pure engine (`durak.engine`) and a bot (`durak.bot`)."""
