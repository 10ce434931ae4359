"""Bundled resources: prompts, icons and the sample project."""
