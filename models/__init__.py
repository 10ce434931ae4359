"""The judge side: domain vocabulary, prompts, output schemas and the judge backends."""
