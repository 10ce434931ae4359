"""The reviewers' work: confirming and overriding tags with undo, random samples drawn for
unbiased figures, and teams without a server (bundles, assignment, the audit chain).
"""
