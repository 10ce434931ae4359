"""Training the claim checker's models: run from the repository root as
`PYTHONPATH=packaging python -m training.<script> --help`. Nothing in the product imports this package
(an import contract in pyproject.toml keeps it so); it reads labelled data and writes
resources/claim_checker/. It is `training`, not `packaging.training`: `packaging` is also a PyPI
package's name, which a package of ours would shadow."""
