"""The report a partner reads (issue 35), rendered once per project for the package (conftest.py)."""
