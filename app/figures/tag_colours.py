"""The one colour of each tag, wherever a tag is shown: the review pane's backgrounds (pale, behind
text), and the bars and marks of the dashboard's and the report's charts (strong). Green is correct,
red incorrect, amber irrelevant, blue missing, everywhere."""

from __future__ import annotations

STRONG = {"correct": "#3a8d5c", "incorrect": "#c1121f", "irrelevant": "#d9a21b", "missing": "#3d6fc4"}
PALE = {"correct": "#c9efd2", "incorrect": "#f6c6c6", "irrelevant": "#fbe3a6", "missing": "#cadcfa"}
UNTAGGED_PALE = "#e4e4e4"
