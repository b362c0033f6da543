"""Every Cypher query of the Neo4j knowledge-graph store, as named constants.

All values are bound parameters; nothing here is ever formatted with user text. Labels and
relationship types that vary come from the model's fixed ``NodeLabel``/``EdgeType`` literals and
are bound too (Cypher 5.26 dynamic labels, ``$(...)``). Every node carries the common label
``ApiAtlas`` so the store never touches other data in a shared database.

Lookups by key name the ``(project, key)`` uniqueness index explicitly: plans are cached, and a
plan made while the database was nearly empty would otherwise scan a whole project per row.
"""

from __future__ import annotations

FULLTEXT_INDEX = "apiatlas_endpoint_search"

SCHEMA = (
    "CREATE CONSTRAINT apiatlas_node_key IF NOT EXISTS "
    "FOR (n:ApiAtlas) REQUIRE (n.project, n.key) IS UNIQUE",
    "CREATE CONSTRAINT apiatlas_corpus_project IF NOT EXISTS "
    "FOR (c:ApiAtlasCorpus) REQUIRE c.project IS UNIQUE",
    "CREATE INDEX apiatlas_node_project IF NOT EXISTS FOR (n:ApiAtlas) ON (n.project)",
    "CREATE INDEX apiatlas_node_scope IF NOT EXISTS FOR (n:ApiAtlas) ON (n.project, n.scope)",
    "CREATE INDEX apiatlas_endpoint_project IF NOT EXISTS FOR (n:Endpoint) ON (n.project)",
    "CREATE INDEX apiatlas_resource_project IF NOT EXISTS FOR (n:Resource) ON (n.project)",
    # Stemmed words of path, operation id, summary, description and resource names, written by
    # the store; the whitespace analyzer keeps Lucene from re-analysing them.
    "CREATE FULLTEXT INDEX apiatlas_endpoint_search IF NOT EXISTS FOR (n:Endpoint) "
    "ON EACH [n.search_path, n.search_operation, n.search_summary, n.search_description, "
    "n.search_resource] OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', "
    "`fulltext.eventually_consistent`: false}}",
)
AWAIT_INDEXES = "CALL db.awaitIndexes($seconds)"

# -- writes (all inside one write transaction per apply) -------------------------------------

SCOPE_NODES = """
MATCH (n:ApiAtlas {project: $project, scope: $scope}) USING INDEX n:ApiAtlas(project, scope)
RETURN n.key AS key, n.hash AS hash
"""
NODE_META = """
UNWIND $keys AS k
MATCH (n:ApiAtlas {project: $project, key: k}) USING INDEX n:ApiAtlas(project, key)
RETURN n.key AS key, n.scope AS scope, n.hash AS hash
"""
# SET n = ... replaces every property (stale props and search fields go); the label may change.
UPSERT_NODES = """
UNWIND $rows AS row
MERGE (n:ApiAtlas {project: $project, key: row.key})
SET n = row.props
REMOVE n:Api:Resource:Endpoint:OperationKind:Parameter:Schema:Field:Tag:DocSection
SET n:$(row.label)
"""
# Counts each relationship once, even when both of its ends are deleted.
DELETE_NODES = """
UNWIND $keys AS k
MATCH (n:ApiAtlas {project: $project, key: k}) USING INDEX n:ApiAtlas(project, key)
OPTIONAL MATCH (n)-[r]-()
WITH collect(DISTINCT n) AS doomed, count(DISTINCT r) AS relationships
FOREACH (n IN doomed | DETACH DELETE n)
RETURN relationships
"""

SCOPE_EDGES = """
MATCH (a:ApiAtlas {project: $project})-[r]->(b:ApiAtlas)
WHERE r.scope = $scope
RETURN a.key AS src, type(r) AS type, b.key AS dst, r.hash AS hash
"""
# Rows whose source or target node does not exist match nothing and are skipped.
INSERT_EDGES = """
UNWIND $rows AS row
MATCH (a:ApiAtlas {project: $project, key: row.src}) USING INDEX a:ApiAtlas(project, key)
MATCH (b:ApiAtlas {project: $project, key: row.dst}) USING INDEX b:ApiAtlas(project, key)
CREATE (a)-[r:$(row.type)]->(b)
SET r = row.props
RETURN count(r) AS created
"""
UPDATE_EDGES = """
UNWIND $rows AS row
MATCH (a:ApiAtlas {project: $project, key: row.src})-[r]->(b:ApiAtlas {project: $project, key: row.dst})
USING INDEX a:ApiAtlas(project, key)
WHERE type(r) = row.type AND r.scope = $scope
SET r = row.props
"""
DELETE_EDGES = """
UNWIND $rows AS row
MATCH (a:ApiAtlas {project: $project, key: row.src})-[r]->(b:ApiAtlas {project: $project, key: row.dst})
USING INDEX a:ApiAtlas(project, key)
WHERE type(r) = row.type AND r.scope = $scope
DELETE r
"""
SET_SEARCH_FIELDS = """
UNWIND $rows AS row
MATCH (n:ApiAtlas {project: $project, key: row.key}) USING INDEX n:ApiAtlas(project, key)
SET n += row.fields
"""
# Search's corpus statistics per project, kept beside the graph so a search need not scan.
UPDATE_CORPUS = """
OPTIONAL MATCH (e:Endpoint:ApiAtlas {project: $project}) USING INDEX e:Endpoint(project)
WITH count(e.search_len) AS rows, coalesce(sum(e.search_len), 0) AS tokens
MERGE (c:ApiAtlasCorpus {project: $project})
SET c.rows = rows, c.tokens = tokens
"""
DELETE_PROJECT = (
    "MATCH (n:ApiAtlas {project: $project}) DETACH DELETE n",
    "MATCH (c:ApiAtlasCorpus {project: $project}) DELETE c",
)

# -- reads ------------------------------------------------------------------------------------

_LABEL = "[l IN labels(n) WHERE l <> 'ApiAtlas'][0]"
NODE = f"""
MATCH (n:ApiAtlas {{project: $project, key: $key}}) USING INDEX n:ApiAtlas(project, key)
RETURN n.key AS key, {_LABEL} AS label, properties(n) AS props
"""
NODES = f"""
UNWIND $keys AS k
MATCH (n:ApiAtlas {{project: $project, key: k}}) USING INDEX n:ApiAtlas(project, key)
RETURN n.key AS key, {_LABEL} AS label, properties(n) AS props
ORDER BY key
"""
NODES_BY_LABEL = f"""
MATCH (n:ApiAtlas {{project: $project}}) WHERE $label IN labels(n)
RETURN n.key AS key, {_LABEL} AS label, properties(n) AS props
ORDER BY key
"""
NODES_BY_LABEL_SCOPE = f"""
MATCH (n:ApiAtlas {{project: $project, scope: $scope}}) USING INDEX n:ApiAtlas(project, scope)
WHERE $label IN labels(n)
RETURN n.key AS key, {_LABEL} AS label, properties(n) AS props
ORDER BY key
"""
SCOPES = """
MATCH (n:ApiAtlas {project: $project}) RETURN DISTINCT n.scope AS scope
UNION
MATCH (:ApiAtlas {project: $project})-[r]->(:ApiAtlas) RETURN DISTINCT r.scope AS scope
"""

# What an EndpointRef needs, without the heavy description/examples properties.
_REF = (
    "n {.api, .method, .path, .operation_id, .summary, .deprecated, .resource, .kind, "
    ".source, .pointer, .json_props}"
)
FIND_ENDPOINTS = f"""
MATCH (n:Endpoint:ApiAtlas {{project: $project}}) USING INDEX n:Endpoint(project)
WHERE ($resource IS NULL OR n.resource = $resource)
  AND ($kind IS NULL OR n.kind = $kind)
  AND ($api IS NULL OR n.api = $api)
RETURN n.key AS key, {_REF} AS props
ORDER BY n.path,
  CASE n.method WHEN 'GET' THEN 0 WHEN 'POST' THEN 1 WHEN 'PUT' THEN 2 WHEN 'PATCH' THEN 3
    WHEN 'DELETE' THEN 4 ELSE 5 END,
  n.key
LIMIT $limit
"""
ENDPOINT_REFS = f"""
UNWIND $keys AS k
MATCH (n:ApiAtlas {{project: $project, key: k}}) USING INDEX n:ApiAtlas(project, key)
RETURN n.key AS key, {_REF} AS props
"""

# An endpoint with its parameters, schemas and doc sections, and the fields of the request
# schema (the first by key), in one round trip. Missing optional matches give null keys.
GET_ENDPOINT = """
MATCH (a:ApiAtlas {project: $project, key: $key}) USING INDEX a:ApiAtlas(project, key)
WHERE a:Endpoint
CALL (a) {
  OPTIONAL MATCH (a)-[r:HAS_PARAMETER|ACCEPTS|RETURNS]->(b:ApiAtlas)
  RETURN collect([type(r), b.key, properties(b)]) AS linked
}
CALL (a) {
  OPTIONAL MATCH (a)<-[:DESCRIBES]-(d:ApiAtlas)
  RETURN collect([d.key, properties(d)]) AS docs
}
CALL (a) {
  OPTIONAL MATCH (a)-[:ACCEPTS]->(s:ApiAtlas)
  WITH s ORDER BY s.key LIMIT 1
  OPTIONAL MATCH (s)-[:HAS_FIELD]->(f:ApiAtlas)
  RETURN collect([f.key, properties(f)]) AS fields
}
RETURN properties(a) AS props, linked, docs, fields
"""
OUT_LINKED_MANY = """
UNWIND $keys AS k
MATCH (a:ApiAtlas {project: $project, key: k})-[r]->(b:ApiAtlas)
USING INDEX a:ApiAtlas(project, key)
WHERE type(r) = $type
RETURN a.key AS source, b.key AS key, properties(r) AS edge, properties(b) AS node
"""
TOUCHING_EDGES = """
UNWIND $keys AS k
MATCH (a:ApiAtlas {project: $project, key: k})-[r]-(:ApiAtlas)
USING INDEX a:ApiAtlas(project, key)
RETURN DISTINCT startNode(r).key AS src, type(r) AS type, endNode(r).key AS dst,
       properties(r) AS props
"""

# Corpus statistics and every candidate of the project in one round trip; the store ranks the
# candidates exactly like the embedded store's FTS5 bm25 (see neo4j_store.rank_bm25).
SEARCH = f"""
MATCH (c:ApiAtlasCorpus {{project: $project}})
CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $query) YIELD node
WITH c, node WHERE node.project = $project
RETURN c.rows AS rows, c.tokens AS tokens,
       collect([node.key, node.scope, node.search_freq, node.search_len]) AS hits
"""

RESOURCES = """
MATCH (n:Resource:ApiAtlas {project: $project}) USING INDEX n:Resource(project)
WHERE $api IS NULL OR n.api = $api
RETURN n.key AS key, properties(n) AS props
ORDER BY key
"""

STATS_APIS = """
MATCH (n:Api:ApiAtlas) WHERE $project IS NULL OR n.project = $project
RETURN DISTINCT n.name AS name ORDER BY name
"""
STATS_NODES_PROJECT = """
MATCH (n:ApiAtlas {project: $project})
UNWIND [l IN labels(n) WHERE l <> 'ApiAtlas'] AS label
RETURN label, count(*) AS count
"""
STATS_NODES_ALL = """
MATCH (n:ApiAtlas)
UNWIND [l IN labels(n) WHERE l <> 'ApiAtlas'] AS label
RETURN label, count(*) AS count
"""
STATS_EDGES_PROJECT = """
MATCH (:ApiAtlas {project: $project})-[r]->(:ApiAtlas)
RETURN type(r) AS type, count(r) AS count
"""
STATS_EDGES_ALL = "MATCH (:ApiAtlas)-[r]->(:ApiAtlas) RETURN type(r) AS type, count(r) AS count"

# -- the FTS5 tokenizer (SQL, on a private in-memory SQLite database) --------------------------
# Search must rank exactly like the embedded store, so words are cut and stemmed by the very
# same FTS5 'porter unicode61' tokenizer rather than by Lucene's analyzers.

TOKENIZER_SCHEMA = (
    "CREATE VIRTUAL TABLE words USING fts5(c0, c1, c2, c3, c4, tokenize = 'porter unicode61')",
    "CREATE VIRTUAL TABLE word_instances USING fts5vocab(words, 'instance')",
)
TOKENIZER_CLEAR = "DELETE FROM words"
TOKENIZER_INSERT = "INSERT INTO words (rowid, c0, c1, c2, c3, c4) VALUES (?, ?, ?, ?, ?, ?)"
TOKENIZER_TERMS = "SELECT doc, col, term FROM word_instances ORDER BY doc, col, offset"
