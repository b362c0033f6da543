"""The team's code as the answers see it: its sites, and the report of where it calls the APIs."""
