"""Assay's use cases, without Qt, by concept: `ingest` (documents, datasets, labels, citations),
`judging` (judge runs, jury, verifier, stress tests), `review` (the reviewers' work, samples, teams),
`figures` (scores, agreement, triage, estimates, the dashboard), `export`, and `cli` (the `assay`
command). Beside them, what they all share: the project file (`project`, `backups`), `settings`
and `errors`; and `about`, what this installation is made of."""
