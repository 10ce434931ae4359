"""The review guidelines a project starts from (Markdown)."""
