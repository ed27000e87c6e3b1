"""The scale tests' real server processes (`servers`)."""

from tests.scale.conftest import servers  # noqa: F401
