"""Judges and what they are worth: judge runs (settings, evidence, resumable runs), the LLM jury,
the model-free verifier, the stress tests that measure how much a judge catches and the standing
they give it, answer-level rubric results, the user's own model files, and the sample's first run.
"""
