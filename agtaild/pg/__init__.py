"""A team's index on PostgreSQL: schema, push from each machine (see docs/team.md)."""
