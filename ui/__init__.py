"""PySide6 windows, Qt item models over app results, workers and dialogs."""
