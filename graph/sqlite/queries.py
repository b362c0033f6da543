"""Every SQL statement of the SQLite knowledge-graph store, as named constants.

All values are bound parameters; nothing here is ever formatted with user text.
"""

from __future__ import annotations

from apiatlas.graph.fts import WEIGHTS
from apiatlas.graph.records import method_rank_sql

SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (
    project TEXT NOT NULL,
    key     TEXT NOT NULL,
    scope   TEXT NOT NULL,
    label   TEXT NOT NULL,
    props   TEXT NOT NULL,
    hash    TEXT NOT NULL,
    PRIMARY KEY (project, key)
);
CREATE INDEX IF NOT EXISTS nodes_by_scope ON nodes (project, scope);
CREATE INDEX IF NOT EXISTS nodes_by_label ON nodes (project, label);
CREATE TABLE IF NOT EXISTS edges (
    project TEXT NOT NULL,
    scope   TEXT NOT NULL,
    src     TEXT NOT NULL,
    type    TEXT NOT NULL,
    dst     TEXT NOT NULL,
    props   TEXT NOT NULL,
    PRIMARY KEY (project, scope, src, type, dst),
    FOREIGN KEY (project, src) REFERENCES nodes (project, key) ON DELETE CASCADE,
    FOREIGN KEY (project, dst) REFERENCES nodes (project, key) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS edges_by_src ON edges (project, src, type);
CREATE INDEX IF NOT EXISTS edges_by_dst ON edges (project, dst, type);
CREATE VIRTUAL TABLE IF NOT EXISTS endpoint_fts USING fts5(
    project UNINDEXED, key UNINDEXED, scope UNINDEXED,
    path, operation, summary, description, resource,
    tokenize = 'porter unicode61'
);
CREATE TABLE IF NOT EXISTS memory_refs (
    project   TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    ref       TEXT NOT NULL,
    kind      TEXT NOT NULL,
    match     TEXT NOT NULL,
    avoid     INTEGER,
    inferred  INTEGER,
    rank      TEXT,
    PRIMARY KEY (project, memory_id, ref)
);
CREATE TABLE IF NOT EXISTS revisions (
    project  TEXT PRIMARY KEY,
    revision TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_refs_by_match ON memory_refs (project, kind, match);
CREATE INDEX IF NOT EXISTS endpoints_by_signature
    ON nodes (project, json_extract(props, '$.method'), json_extract(props, '$.path'))
    WHERE label = 'Endpoint';
CREATE INDEX IF NOT EXISTS endpoints_by_resource
    ON nodes (project, json_extract(props, '$.resource'))
    WHERE label = 'Endpoint';
"""

PRAGMAS = ("PRAGMA journal_mode = WAL", "PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 10000")

BEGIN = "BEGIN IMMEDIATE"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"

SCOPE_NODES = "SELECT key, hash FROM nodes WHERE project = ? AND scope = ?"
# The keys come as one JSON array parameter: one statement for any number of them.
NODES_META = """
SELECT key, scope, hash FROM nodes
WHERE project = ? AND key IN (SELECT value FROM json_each(?))
"""
PROJECT_KEYS = "SELECT key FROM nodes WHERE project = ?"
UPSERT_NODE = """
INSERT INTO nodes (project, key, scope, label, props, hash) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (project, key) DO UPDATE SET
    scope = excluded.scope, label = excluded.label, props = excluded.props, hash = excluded.hash
"""
DELETE_NODE = "DELETE FROM nodes WHERE project = ? AND key = ?"
DELETE_NODE_EDGES = "DELETE FROM edges WHERE project = ? AND (src = ? OR dst = ?)"

SCOPE_EDGES = "SELECT src, type, dst, props FROM edges WHERE project = ? AND scope = ?"
INSERT_EDGE = "INSERT INTO edges (project, scope, src, type, dst, props) VALUES (?, ?, ?, ?, ?, ?)"
UPDATE_EDGE = """
UPDATE edges SET props = ? WHERE project = ? AND scope = ? AND src = ? AND type = ? AND dst = ?
"""
DELETE_EDGE = """
DELETE FROM edges WHERE project = ? AND scope = ? AND src = ? AND type = ? AND dst = ?
"""

FTS_DELETE_SCOPE = "DELETE FROM endpoint_fts WHERE project = ? AND scope = ?"
FTS_INSERT = """
INSERT INTO endpoint_fts (project, key, scope, path, operation, summary, description, resource)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
"""
# Column weights follow the declaration order: project, key, scope (unindexed), then the five
# searchable texts with apiatlas.graph.fts.WEIGHTS (the one definition every store ranks by).
# The best rows are chosen inside the full-text table and only they are joined to their nodes:
# a common word matches thousands of endpoints of a large API.
FTS_SEARCH = f"""
SELECT n.key, n.props, hit.rank
FROM (
  SELECT project, key, bm25(endpoint_fts, 0, 0, 0, {", ".join(map(str, WEIGHTS))}) AS rank
  FROM endpoint_fts
  WHERE endpoint_fts MATCH ? AND project = ? AND (? IS NULL OR scope = ?)
  ORDER BY rank, key
  LIMIT ?
) AS hit JOIN nodes AS n ON n.project = hit.project AND n.key = hit.key
ORDER BY hit.rank, n.key
"""

SCOPES = """
SELECT DISTINCT scope FROM nodes WHERE project = ?
UNION SELECT DISTINCT scope FROM edges WHERE project = ?
ORDER BY 1
"""
NODES_BY_LABEL = "SELECT key, label, props FROM nodes WHERE project = ? AND label = ? ORDER BY key"
NODES_BY_LABEL_SCOPE = """
SELECT key, label, props FROM nodes WHERE project = ? AND label = ? AND scope = ? ORDER BY key
"""
NODE = "SELECT key, label, props FROM nodes WHERE project = ? AND key = ?"
EDGES_BY_SCOPE = """
SELECT src, type, dst, props FROM edges WHERE project = ? AND scope = ?
ORDER BY src, type, dst
"""

_FIND_ENDPOINTS = f"""
SELECT key, props FROM nodes
WHERE project = ? AND label = 'Endpoint'
  AND {{resource}}
  AND (? IS NULL OR json_extract(props, '$.kind') = ?)
  AND (? IS NULL OR json_extract(props, '$.api') = ?)
ORDER BY json_extract(props, '$.path'), {method_rank_sql("json_extract(props, '$.method')")}, key
LIMIT ?
"""
FIND_ENDPOINTS = _FIND_ENDPOINTS.format(resource="1")
# A plain equality on the indexed expression, so that endpoints_by_resource answers it instead
# of a scan of every endpoint of the project.
FIND_ENDPOINTS_OF_RESOURCE = _FIND_ENDPOINTS.format(
    resource="json_extract(props, '$.resource') = ?"
)

OUT_NEIGHBOURS = """
SELECT e.dst, e.props, n.label, n.props FROM edges AS e
JOIN nodes AS n ON n.project = e.project AND n.key = e.dst
WHERE e.project = ? AND e.src = ? AND e.type = ?
"""
IN_NEIGHBOURS = """
SELECT e.src, e.props, n.label, n.props FROM edges AS e
JOIN nodes AS n ON n.project = e.project AND n.key = e.src
WHERE e.project = ? AND e.dst = ? AND e.type = ?
"""
TOUCHING_EDGES = """
SELECT src, type, dst, props FROM edges WHERE project = ? AND src = ?
UNION
SELECT src, type, dst, props FROM edges WHERE project = ? AND dst = ?
"""

RESOURCES = """
SELECT key, props FROM nodes
WHERE project = ? AND label = 'Resource' AND (? IS NULL OR json_extract(props, '$.api') = ?)
ORDER BY key
"""

STATS_APIS = """
SELECT DISTINCT json_extract(props, '$.name') FROM nodes
WHERE label = 'Api' AND (? IS NULL OR project = ?) ORDER BY 1
"""
STATS_NODES = "SELECT label, COUNT(*) FROM nodes WHERE (? IS NULL OR project = ?) GROUP BY label"
STATS_EDGES = "SELECT type, COUNT(*) FROM edges WHERE (? IS NULL OR project = ?) GROUP BY type"

REVISION = "SELECT revision FROM revisions WHERE project = ?"
# Every change writes a revision row, so the projects are among those rows: a short scan that
# asks the nodes' primary key once per project.
PROJECTS = """
SELECT project FROM revisions r
WHERE EXISTS (SELECT 1 FROM nodes n WHERE n.project = r.project) ORDER BY project
"""
SET_REVISION = (
    "INSERT INTO revisions (project, revision) VALUES (?, ?) "
    "ON CONFLICT (project) DO UPDATE SET revision = excluded.revision"
)
DELETE_PROJECT = (
    "DELETE FROM endpoint_fts WHERE project = ?",
    "DELETE FROM edges WHERE project = ?",
    "DELETE FROM nodes WHERE project = ?",
    "DELETE FROM memory_refs WHERE project = ?",
)

# -- project-memory links ------------------------------------------------------------------
# A memory's refs are stored in comparison form and resolved against the graph when read, so
# they follow the endpoints across re-ingests without any bookkeeping in apply().

MEMORY_REFS_DELETE = "DELETE FROM memory_refs WHERE project = ? AND memory_id = ?"
MEMORY_REFS_INSERT = """
INSERT OR IGNORE INTO memory_refs (project, memory_id, ref, kind, match, avoid, inferred, rank)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
"""
# A file written before the flags: they are added, empty (read as "look at the memory").
MEMORY_REFS_COLUMNS = "SELECT name FROM pragma_table_info('memory_refs')"
MEMORY_REFS_FLAGS = (("avoid", "INTEGER"), ("inferred", "INTEGER"), ("rank", "TEXT"))
MEMORY_REFS_ADD = "ALTER TABLE memory_refs ADD COLUMN {name} {kind}"  # names from the tuple above
# Each memory's link to each wanted endpoint, and what its refs say about it: the arguments are
# the project, a JSON array of [endpoint key, ref kind, comparison form] (the endpoint's own
# signature, and each name of its resource), and the most links of each kind per endpoint
# (null: all). A flag stored empty (a link from before the flags) reads as set. Bound, never
# spliced.
MEMORY_LINKS = """
WITH wanted AS (
    SELECT json_extract(value, '$[0]') AS key, json_extract(value, '$[1]') AS kind,
           json_extract(value, '$[2]') AS match
    FROM json_each(?2)
), linked AS (
    SELECT w.key, r.memory_id,
           MAX(CASE WHEN r.kind = 'endpoint' THEN COALESCE(r.avoid, 1) ELSE 0 END) AS avoids,
           MAX(CASE WHEN r.kind = 'endpoint' THEN 1 - COALESCE(r.inferred, 0) ELSE 0 END) AS named,
           MAX(COALESCE(r."rank", '')) AS reading
    FROM wanted AS w
    JOIN memory_refs AS r ON r.project = ?1 AND r.kind = w.kind AND r.match = w.match
    GROUP BY w.key, r.memory_id
), ranked AS (
    SELECT *, ROW_NUMBER() OVER (
        PARTITION BY key, CASE WHEN avoids THEN 0 WHEN named THEN 1 ELSE 2 END
        ORDER BY reading, memory_id
    ) AS place
    FROM linked
)
SELECT key, memory_id, avoids, named, reading FROM ranked
WHERE ?3 IS NULL OR place <= ?3
ORDER BY key, reading, memory_id
"""
# Candidates for one signature: same method, path in [prefix, prefix + U+10FFFF), i.e. starting
# with its literal prefix, a range the endpoints_by_signature index answers without parsing
# every endpoint's props. The store keeps those whose parameter-blanked path is equal.
ENDPOINT_CANDIDATES = """
SELECT key, props FROM nodes
WHERE project = ? AND label = 'Endpoint'
  AND json_extract(props, '$.method') = ?
  AND json_extract(props, '$.path') >= ? AND json_extract(props, '$.path') < ?
  AND (? IS NULL OR json_extract(props, '$.api') = ?)
"""
# Unordered, so the planner takes the (project, label) index rather than walking the whole
# project in key order.
RESOURCE_NAMES = "SELECT key, props FROM nodes WHERE project = ? AND label = 'Resource'"
# Arguments: a JSON array of endpoint keys, the project. Only what linking needs, so the large
# props (examples, descriptions) are never parsed in Python.
ENDPOINT_SIGNATURES = """
SELECT n.key, json_extract(n.props, '$.method'), json_extract(n.props, '$.path'),
       json_extract(n.props, '$.resource')
FROM json_each(?) AS wanted
CROSS JOIN nodes AS n ON n.project = ? AND n.key = wanted.value
WHERE +n.label = 'Endpoint'
"""
# Arguments: a JSON array of keys, the project, the label. CROSS JOIN and the unary + keep the
# plan to one primary-key lookup per key (not a walk over every node with the label).
NODES_BY_KEYS = """
SELECT n.key, n.props FROM json_each(?) AS wanted
CROSS JOIN nodes AS n ON n.project = ? AND n.key = wanted.value
WHERE +n.label = ?
"""
