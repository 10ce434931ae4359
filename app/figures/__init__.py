"""What a review yields: LeMAJ scores, agreement and judge-human alignment (SQL, row by row and
columnar), triage with a guaranteed miss rate, estimates with intervals, the judge's calibration,
and everything the dashboard shows, plots included (the report draws the same ones).
"""
