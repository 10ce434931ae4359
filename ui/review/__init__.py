"""The review window, as napari's QtViewer: `window.ReviewWindow` only composes its parts and wires
them. The parts: the answer queue (queue_pane), the open answer with its data points (answer_pane,
answer_view, answer_html, verifier_flags), the contract (document_pane, document_view), a judge run
in the status bar (judge_runner), the clock of active review time (activity_clock), and the actions
the keys and menus trigger (review_actions; sample_actions for the statistics ones)."""
