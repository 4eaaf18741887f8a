"""Example Agent (``example``): one JSONL file per session under ``$EXAMPLE_HOME/sessions``.

Made by following docs/adapters.md, "Adding an agent", step by step
(tests/test_adding_an_agent.py checks that it meets what the built-in packages meet). Modules:
adapter (the Adapter class), parser (lines → events and usage).
"""

from tests.example_agent.adapter import ExampleAdapter

__all__ = ["ExampleAdapter"]
