"""The welcome window fits a 1366 × 768 laptop screen however long the names of the models used before
(issue 56, item 8): its combo boxes elide a long name and give it in full as a tooltip."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from app.settings import Settings
from ui.welcome import WelcomeWindow

LONG_NAMES = [
    "Meta-Llama-3.1-70B-Instruct-abliterated-uncensored-IQ4_XS-imatrix-00001-of-00002.gguf",
    "DeepSeek-R1-Distill-Qwen-32B-Instruct-Legal-Finetune-v2.5-Q5_K_M-long-context-128k.gguf",
]


def test_the_welcome_window_fits_a_laptop_screen_with_long_model_names(qtbot, monkeypatch, tmp_path: Path) -> None:
    for name in LONG_NAMES:
        (tmp_path / name).write_bytes(b"GGUF")
    monkeypatch.setattr("ui.model_picker.recent_models", lambda: [{"path": str(tmp_path / n)} for n in LONG_NAMES])
    welcome = WelcomeWindow(Settings(), ask_passphrase=lambda _where, _new: None)
    qtbot.addWidget(welcome)
    welcome.show()
    qtbot.waitExposed(welcome)
    qtbot.waitUntil(lambda: "click one to use it" in welcome.picker.found.status.text(), timeout=30_000)  # done looking
    welcome.resize(1366, 768)
    qtbot.wait(50)
    assert welcome.width() <= 1366 and welcome.minimumSizeHint().width() <= 1366 - 40  # room for a window frame
    recent = welcome.picker.recent
    assert recent.isVisibleTo(welcome) and recent.width() < 400
    names = [recent.itemData(i, Qt.ItemDataRole.ToolTipRole) for i in range(recent.count())]
    assert all(any(n.startswith(name) for n in names) for name in LONG_NAMES)  # each name in full, as its tooltip
    assert all(box.minimumSizeHint().width() < 400 for box in welcome.findChildren(QComboBox))
