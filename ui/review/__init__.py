"""The review window, as napari's QtViewer: views of one Qt-free ReviewSession (app/review/session.py).
`window.ReviewWindow` composes the panes and builds its menus from the keymap (app/review/keymap.py);
each pane subscribes to the session's change notification. The parts: the answer queue (queue_pane,
with sample_actions for its statistics), the open answer with its data points (answer_pane,
answer_view, answer_html, verifier_flags), the one points table every view uses (point_table), the
contract (document_pane, document_view), side by side (side_by_side), adjudication
(adjudication_view), the guidelines (guidelines_panel), a judge run in the status bar
(judge_runner), the clock of active review time (activity_clock), and the actions that ask
something first (review_actions)."""
