"""The one exception type the engine raises for anything it refuses."""


class EngineError(Exception):
    """A refused action or invalid input.

    `code` is a machine-readable code from shared/PROTOCOL.md (`illegal_action`, `not_your_turn`,
    `bad_amount`, `bad_message`, ...) or `invalid_rules` for a rule set the engine cannot play;
    `message` is readable English.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
