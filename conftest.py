"""Repository-level pytest setup: pytester for the plugin's own tests."""

pytest_plugins = ["pytester"]
