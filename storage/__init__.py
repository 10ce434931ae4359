"""The project store: SQLAlchemy tables, migrations and repository functions."""
