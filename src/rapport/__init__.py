"""rapport: agents that learn how each person likes to work, across sessions."""

__version__ = "0.1.0"
