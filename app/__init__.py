"""Use cases: import, judge runs, review actions, analytics, export, and the CLI."""
