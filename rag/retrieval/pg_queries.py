"""Every SQL statement apiatlas itself sends to PostgreSQL, as named constants.

Values are always bind parameters (``%(name)s``). Identifiers (the table and index names, which
come from configuration and are validated by :func:`apiatlas.rag.retrieval.pgvector.check_table_name`) are
composed with :class:`psycopg.sql.Identifier`, never pasted into the text. The vector table
itself, its rows and the HNSW index are written by langchain-postgres.
"""

from __future__ import annotations

from psycopg import sql

CREATE_VECTOR_EXTENSION = sql.SQL("CREATE EXTENSION IF NOT EXISTS vector")

VECTOR_EXTENSION_VERSION = sql.SQL("SELECT extversion FROM pg_extension WHERE extname = 'vector'")

TABLE_EXISTS = sql.SQL(
    "SELECT 1 FROM information_schema.tables "
    "WHERE table_schema = %(schema)s AND table_name = %(table)s"
)

# pgvector stores a vector column's dimension as the column's type modifier.
VECTOR_DIMENSION = sql.SQL(
    "SELECT a.atttypmod FROM pg_attribute a "
    "JOIN pg_class c ON a.attrelid = c.oid "
    "JOIN pg_namespace n ON c.relnamespace = n.oid "
    "WHERE n.nspname = %(schema)s AND c.relname = %(table)s AND a.attname = %(column)s "
    "AND NOT a.attisdropped"
)

# A B-tree on one JSON metadata key, matching the ``column->>'key'`` expression that
# PGVectorStore's metadata filters produce, so project/api scoping never scans the table.
# Format with: index, schema, table (Identifiers), column (Identifier), key (Literal).
CREATE_METADATA_KEY_INDEX = sql.SQL(
    "CREATE INDEX IF NOT EXISTS {index} ON {schema}.{table} (({column} ->> {key}))"
)
