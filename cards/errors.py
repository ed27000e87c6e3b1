"""The one refusal type of the site: every layer (an engine, a table flow, a protocol parser, a service, the
live runtime) refuses with it, so a refusal ends the same way for the client whatever refused it."""


class Refused(Exception):
    """A refused command or invalid input: nothing was changed.

    `code` is a machine-readable code of the protocol (`illegal_action`, `not_your_turn`, `bad_amount`,
    `bad_message`, `stale_version`, ...; docs/protocol.md lists them); `message` is readable English.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
