"""Every Cypher query of the Neo4j knowledge-graph store, as named constants.

All values are bound parameters; nothing here is ever formatted with user text. Labels and
relationship types that vary come from the model's fixed ``NodeLabel``/``EdgeType`` literals and
are bound too (Cypher 5.26 dynamic labels, ``$(...)``). Every node carries the common label
``ApiAtlas`` so the store never touches other data in a shared database.

Lookups by key name the ``(project, key)`` uniqueness index explicitly: plans are cached, and a
plan made while the database was nearly empty would otherwise scan a whole project per row.
"""

from __future__ import annotations

from apiatlas.graph.records import method_rank_sql

FULLTEXT_INDEX = "apiatlas_text"
SEARCH_INDEX_VERSION = 2
"""Bumped whenever the stored search index changes shape; older graphs are rebuilt on open."""

SCHEMA = (
    "CREATE CONSTRAINT apiatlas_node_key IF NOT EXISTS "
    "FOR (n:ApiAtlas) REQUIRE (n.project, n.key) IS UNIQUE",
    "CREATE CONSTRAINT apiatlas_corpus_project IF NOT EXISTS "
    "FOR (c:ApiAtlasCorpus) REQUIRE c.project IS UNIQUE",
    "CREATE CONSTRAINT apiatlas_revision_project IF NOT EXISTS "
    "FOR (r:ApiAtlasRevision) REQUIRE r.project IS UNIQUE",
    "CREATE INDEX apiatlas_node_project IF NOT EXISTS FOR (n:ApiAtlas) ON (n.project)",
    "CREATE INDEX apiatlas_node_scope IF NOT EXISTS FOR (n:ApiAtlas) ON (n.project, n.scope)",
    "CREATE INDEX apiatlas_endpoint_project IF NOT EXISTS FOR (n:Endpoint) ON (n.project)",
    "CREATE INDEX apiatlas_resource_project IF NOT EXISTS FOR (n:Resource) ON (n.project)",
    # For people exploring the graph with their own Cypher (Neo4j Browser, Bloom):
    # db.index.fulltext.queryNodes('apiatlas_text', 'create location'). The store's ranked
    # search uses the :ApiAtlasTerm posting lists below, which FTS5's bm25 needs.
    "DROP INDEX apiatlas_endpoint_search IF EXISTS",  # its stemmed fields are gone (version 2)
    f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS FOR (n:Endpoint|Resource) "
    "ON EACH [n.summary, n.description, n.operation_id, n.name] "
    "OPTIONS {indexConfig: {`fulltext.eventually_consistent`: false}}",
    # The search index (see apiatlas.graph.neo4j.search): one posting list per project, API
    # scope and stemmed term. Not :ApiAtlas nodes, so graph queries never see them.
    "CREATE INDEX apiatlas_term IF NOT EXISTS FOR (t:ApiAtlasTerm) ON (t.project, t.term)",
    "CREATE INDEX apiatlas_term_scope IF NOT EXISTS FOR (t:ApiAtlasTerm) ON (t.project, t.scope)",
    "CREATE CONSTRAINT apiatlas_schema_name IF NOT EXISTS "
    "FOR (s:ApiAtlasSchema) REQUIRE s.name IS UNIQUE",
    # Project memories (see MEMORY_* below) are not :ApiAtlas nodes, so the graph's own
    # queries (stats, nodes, scopes, neighbourhoods, search) never see them.
    "CREATE CONSTRAINT apiatlas_memory_id IF NOT EXISTS "
    "FOR (m:ApiAtlasMemory) REQUIRE (m.project, m.id) IS UNIQUE",
    "CREATE INDEX apiatlas_memory_project IF NOT EXISTS FOR (m:ApiAtlasMemory) ON (m.project)",
    "CREATE INDEX apiatlas_endpoint_signature IF NOT EXISTS "
    "FOR (n:Endpoint) ON (n.project, n.method, n.path)",
)
AWAIT_INDEXES = "CALL db.awaitIndexes($seconds)"

# -- writes (all inside one write transaction per apply) -------------------------------------

SCOPE_NODES = """
MATCH (n:ApiAtlas {project: $project, scope: $scope}) USING INDEX SEEK n:ApiAtlas(project, scope)
RETURN n.key AS key, n.hash AS hash
"""
NODE_META = """
UNWIND $keys AS k
MATCH (n:ApiAtlas {project: $project, key: k}) USING INDEX SEEK n:ApiAtlas(project, key)
RETURN n.key AS key, n.scope AS scope, n.hash AS hash
"""
# Nodes new to the project (the store has checked): no MERGE lookup, no labels to strip.
INSERT_NODES = """
UNWIND $rows AS row
CREATE (n:ApiAtlas)
SET n = row.props, n:$(row.label)
"""
# SET n = ... replaces every property (stale props go); the label may change.
UPSERT_NODES = """
UNWIND $rows AS row
MERGE (n:ApiAtlas {project: $project, key: row.key})
SET n = row.props
REMOVE n:Api:Resource:Endpoint:OperationKind:Parameter:Schema:Field:Tag:DocSection:CodeFile:CodeFunction:CodeSite
SET n:$(row.label)
"""
# Counts each relationship once, even when both of its ends are deleted; a memory's ABOUT
# link is not a graph edge, so it goes uncounted (it comes back if the endpoint does).
DELETE_NODES = """
UNWIND $keys AS k
MATCH (n:ApiAtlas {project: $project, key: k}) USING INDEX SEEK n:ApiAtlas(project, key)
OPTIONAL MATCH (n)-[r]-(:ApiAtlas)
WITH collect(DISTINCT n) AS doomed, count(DISTINCT r) AS relationships
FOREACH (n IN doomed | DETACH DELETE n)
RETURN relationships
"""

SCOPE_EDGES = """
MATCH (a:ApiAtlas {project: $project})-[r]->(b:ApiAtlas)
WHERE r.scope = $scope
RETURN a.key AS src, type(r) AS type, b.key AS dst, r.hash AS hash
"""
EDGES_BY_SCOPE = """
MATCH (a:ApiAtlas {project: $project})-[r]->(b:ApiAtlas)
WHERE r.scope = $scope
RETURN a.key AS src, type(r) AS type, b.key AS dst, properties(r) AS props
ORDER BY src, type, dst
"""
# Rows whose source or target node does not exist match nothing and are skipped.
INSERT_EDGES = """
UNWIND $rows AS row
MATCH (a:ApiAtlas {project: $project, key: row.src}) USING INDEX SEEK a:ApiAtlas(project, key)
MATCH (b:ApiAtlas {project: $project, key: row.dst}) USING INDEX SEEK b:ApiAtlas(project, key)
CREATE (a)-[r:$(row.type)]->(b)
SET r = row.props
RETURN count(r) AS created
"""
UPDATE_EDGES = """
UNWIND $rows AS row
MATCH (a:ApiAtlas {project: $project, key: row.src})-[r]->(b:ApiAtlas {project: $project, key: row.dst})
USING INDEX SEEK a:ApiAtlas(project, key)
WHERE type(r) = row.type AND r.scope = $scope
SET r = row.props
"""
DELETE_EDGES = """
UNWIND $rows AS row
MATCH (a:ApiAtlas {project: $project, key: row.src})-[r]->(b:ApiAtlas {project: $project, key: row.dst})
USING INDEX SEEK a:ApiAtlas(project, key)
WHERE type(r) = row.type AND r.scope = $scope
DELETE r
"""
SET_SEARCH_LEN = """
UNWIND $rows AS row
MATCH (n:ApiAtlas {project: $project, key: row.key}) USING INDEX SEEK n:ApiAtlas(project, key)
SET n.search_len = row.len
"""
DELETE_SCOPE_TERMS = """
MATCH (t:ApiAtlasTerm {project: $project, scope: $scope}) USING INDEX SEEK t:ApiAtlasTerm(project, scope)
DELETE t
"""
CREATE_TERMS = """
UNWIND $rows AS row
CREATE (t:ApiAtlasTerm {project: $project, scope: $scope, term: row.term, keys: row.keys,
  weights: row.weights, lens: row.lens})
"""
# Opening a graph written by an older version: which scopes to re-index, and what to clear.
SEARCH_INDEX_VERSION_READ = """
OPTIONAL MATCH (s:ApiAtlasSchema {name: 'apiatlas'}) RETURN s.search_version AS version
"""
SEARCH_INDEX_VERSION_SET = """
MERGE (s:ApiAtlasSchema {name: 'apiatlas'}) SET s.search_version = $version
"""
ENDPOINT_SCOPES = """
MATCH (e:Endpoint:ApiAtlas) RETURN DISTINCT e.project AS project, e.scope AS scope
ORDER BY project, scope
"""
DROP_LEGACY_SEARCH_FIELDS = """
MATCH (e:Endpoint:ApiAtlas) WHERE e.search_freq IS NOT NULL
REMOVE e.search_path, e.search_operation, e.search_summary, e.search_description,
  e.search_resource, e.search_freq
"""
# Search's corpus statistics per project, kept beside the graph so a search need not scan.
UPDATE_CORPUS = """
OPTIONAL MATCH (e:Endpoint:ApiAtlas {project: $project}) USING INDEX SEEK e:Endpoint(project)
WITH count(e.search_len) AS rows, coalesce(sum(e.search_len), 0) AS tokens
MERGE (c:ApiAtlasCorpus {project: $project})
SET c.rows = rows, c.tokens = tokens
"""
# A project's revision token (KnowledgeGraphStore.revision); it outlives delete_project.
SET_REVISION = "MERGE (r:ApiAtlasRevision {project: $project}) SET r.revision = $revision"
REVISION = "OPTIONAL MATCH (r:ApiAtlasRevision {project: $project}) RETURN r.revision AS revision"
PROJECTS = """
MATCH (r:ApiAtlasRevision) WHERE EXISTS { MATCH (n:ApiAtlas {project: r.project}) }
RETURN r.project AS project ORDER BY project
"""
DELETE_PROJECT = (
    "MATCH (n:ApiAtlas {project: $project}) DETACH DELETE n",
    "MATCH (c:ApiAtlasCorpus {project: $project}) DELETE c",
    "MATCH (t:ApiAtlasTerm {project: $project}) DELETE t",
    "MATCH (m:ApiAtlasMemory {project: $project}) DETACH DELETE m",
)

# -- reads ------------------------------------------------------------------------------------

_LABEL = "[l IN labels(n) WHERE l <> 'ApiAtlas'][0]"
NODE = f"""
MATCH (n:ApiAtlas {{project: $project, key: $key}}) USING INDEX SEEK n:ApiAtlas(project, key)
RETURN n.key AS key, {_LABEL} AS label, properties(n) AS props
"""
NODES = f"""
UNWIND $keys AS k
MATCH (n:ApiAtlas {{project: $project, key: k}}) USING INDEX SEEK n:ApiAtlas(project, key)
RETURN n.key AS key, {_LABEL} AS label, properties(n) AS props
ORDER BY key
"""
NODES_BY_LABEL = f"""
MATCH (n:ApiAtlas {{project: $project}}) WHERE $label IN labels(n)
RETURN n.key AS key, {_LABEL} AS label, properties(n) AS props
ORDER BY key
"""
NODES_BY_LABEL_SCOPE = f"""
MATCH (n:ApiAtlas {{project: $project, scope: $scope}}) USING INDEX SEEK n:ApiAtlas(project, scope)
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
_REF_PROPS = (
    "{.api, .method, .path, .operation_id, .summary, .deprecated, .resource, .kind, .source, "
    ".pointer, .json_props}"
)
_REF = f"n {_REF_PROPS}"
FIND_ENDPOINTS = f"""
MATCH (n:Endpoint:ApiAtlas {{project: $project}}) USING INDEX SEEK n:Endpoint(project)
WHERE ($resource IS NULL OR n.resource = $resource)
  AND ($kind IS NULL OR n.kind = $kind)
  AND ($api IS NULL OR n.api = $api)
RETURN n.key AS key, {_REF} AS props
ORDER BY n.path, {method_rank_sql("n.method")}, n.key
LIMIT $limit
"""

# An endpoint with its parameters, schemas and doc sections, and the fields of the request
# schema (the first by key), in one round trip. Missing optional matches give null keys.
GET_ENDPOINT = """
MATCH (a:ApiAtlas {project: $project, key: $key}) USING INDEX SEEK a:ApiAtlas(project, key)
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
# Every REQUIRES edge out of what the endpoint reaches over REQUIRES, in one round trip; the
# store walks them breadth first itself (max_depth is a plain argument there, and Cypher cannot
# bind a path length). Reachable sets are small (at most 13 nodes on Adobe Commerce admin), and
# the planner walks them with a pruning BFS that visits each node once.
DEPENDENCY_TRAIL = f"""
MATCH (n:ApiAtlas {{project: $project, key: $key}}) USING INDEX SEEK n:ApiAtlas(project, key)
CALL (n) {{
  MATCH (n)-[:REQUIRES*0..]->(m:ApiAtlas)
  WITH DISTINCT m
  MATCH (m)-[r:REQUIRES]->(b:ApiAtlas)
  RETURN collect([m.key, b.key, properties(r), b {_REF_PROPS}]) AS edges
}}
RETURN {_REF} AS props, edges
"""
TOUCHING_EDGES = """
UNWIND $keys AS k
MATCH (a:ApiAtlas {project: $project, key: k})-[r]-(:ApiAtlas)
USING INDEX SEEK a:ApiAtlas(project, key)
RETURN DISTINCT startNode(r).key AS src, type(r) AS type, endNode(r).key AS dst,
       properties(r) AS props
"""

# Search in one round trip. An index seek per query term ($terms, one per phrase, repeats kept)
# reads its posting lists in the project (one per API scope); their sizes give each phrase's
# number of hits (for the idfs). The postings in $scope are summed per endpoint with this query's
# own bm25, and the $top best come back with what the store needs to re-score them (their
# [phrase index, weight] pairs and length) and their EndpointRef props, plus `cut`, the score of
# the next one. The store re-scores exactly in Python (Java's log may differ from C's in the last
# bit) and runs the query again with a larger $top in the rare case a near-tie straddles the cut.
SEARCH = f"""
MATCH (c:ApiAtlasCorpus {{project: $project}})
WITH c, toFloat(c.tokens) / toFloat(c.rows) AS avgdl
UNWIND range(0, size($terms) - 1) AS i
OPTIONAL MATCH (t:ApiAtlasTerm {{project: $project, term: $terms[i]}})
USING INDEX SEEK t:ApiAtlasTerm(project, term)
WITH c, avgdl, i, collect(t) AS ts
WITH c, avgdl, collect({{i: i, ts: ts, n: reduce(n = 0, t IN ts | n + size(t.keys))}}) AS per
WITH c, avgdl, per, [p IN per | p.n] AS nhit
WITH c, avgdl, per, nhit, [n IN nhit | log((c.rows - n + 0.5) / (n + 0.5))] AS raw
WITH c, avgdl, per, nhit, [x IN raw | CASE WHEN x > 0.0 THEN x ELSE 1.0e-6 END] AS idf
UNWIND per AS p
UNWIND p.ts AS t
WITH c, avgdl, nhit, idf[p.i] AS idf, p.i AS i, t
WHERE $scope IS NULL OR t.scope = $scope
WITH c, avgdl, nhit, idf, i, t.keys AS keys, t.weights AS ws, t.lens AS ls
UNWIND range(0, size(keys) - 1) AS j
WITH c, nhit, keys[j] AS key, ls[j] AS len, [i, ws[j]] AS f,
  idf * ((ws[j] * ($k1 + 1.0)) / (ws[j] + $k1 * (1 - $b + $b * toFloat(ls[j]) / avgdl))) AS part
WITH c, nhit, key, len, collect(f) AS f, sum(part) AS approx
ORDER BY approx DESC, key
WITH c, nhit, collect([key, f, len, approx]) AS ranked
WITH c, nhit, ranked[$top][3] AS cut, ranked[0..$top] AS best
UNWIND best AS x
MATCH (n:ApiAtlas {{project: $project, key: x[0]}}) USING INDEX SEEK n:ApiAtlas(project, key)
RETURN c.rows AS rows, c.tokens AS tokens, nhit, cut,
  collect([x[0], x[1], x[2], n {_REF_PROPS}]) AS top
"""

RESOURCES = """
MATCH (n:Resource:ApiAtlas {project: $project}) USING INDEX SEEK n:Resource(project)
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


# -- project-memory links ---------------------------------------------------------------------
# (:Memory:ApiAtlasMemory {project, id, refs, avoid, inferred, rank})-[:ABOUT {project}]->
# (:Endpoint|:Resource). The refs are kept on the node so apply() can re-create ABOUT links when
# a removed endpoint returns; avoid and inferred are the refs the memory forbids and those found
# in its text (null on a node written before them), rank its reading order.

MEMORY_UPSERT = """
MERGE (m:ApiAtlasMemory {project: $project, id: $id})
SET m:Memory, m.refs = $refs, m.avoid = $avoid, m.inferred = $inferred, m.rank = $rank
"""
MEMORY_DELETE = "MATCH (m:ApiAtlasMemory {project: $project, id: $id}) DETACH DELETE m"
# $ids null: every memory of the project.
MEMORY_REFS = """
MATCH (m:ApiAtlasMemory {project: $project}) WHERE $ids IS NULL OR m.id IN $ids
RETURN m.id AS id, m.refs AS refs
"""
MEMORY_LINKS = """
MATCH (m:ApiAtlasMemory {project: $project})-[:ABOUT]->(t:ApiAtlas {project: $project})
WHERE $ids IS NULL OR m.id IN $ids
RETURN m.id AS id, t.key AS key
"""
ABOUT_CREATE = """
UNWIND $rows AS row
MATCH (m:ApiAtlasMemory {project: $project, id: row.id})
MATCH (t:ApiAtlas {project: $project, key: row.key}) USING INDEX SEEK t:ApiAtlas(project, key)
MERGE (m)-[r:ABOUT]->(t)
SET r.project = $project
"""
ABOUT_DELETE = """
UNWIND $rows AS row
MATCH (m:ApiAtlasMemory {project: $project, id: row.id})-[r:ABOUT]->(t:ApiAtlas {project: $project})
WHERE t.key = row.key
DELETE r
"""
# Candidates for each signature: same method, path starting with its literal prefix (a seek on
# the signature index); the store keeps those whose parameter-blanked path is equal.
ENDPOINT_CANDIDATES = f"""
UNWIND $probes AS p
MATCH (n:Endpoint:ApiAtlas {{project: $project}})
USING INDEX SEEK n:Endpoint(project, method, path)
WHERE n.method = p.method AND n.path STARTS WITH p.prefix
  AND ($api IS NULL OR n.api = $api)
RETURN p.signature AS signature, n.key AS key, {_REF} AS props
"""
RESOURCE_NAMES = """
MATCH (n:Resource:ApiAtlas {project: $project}) USING INDEX SEEK n:Resource(project)
RETURN n.key AS key, n {.name, .aliases, .json_props} AS props
"""
MEMORIES_ABOUT = """
UNWIND $keys AS k
MATCH (e:ApiAtlas {project: $project, key: k}) USING INDEX SEEK e:ApiAtlas(project, key)
WHERE e:Endpoint
OPTIONAL MATCH (e)<-[:ABOUT]-(m:ApiAtlasMemory {project: $project})
WITH e, collect(m {.id, .refs, .avoid, .inferred, .rank}) AS direct
OPTIONAL MATCH (:Resource:ApiAtlas {project: $project, key: e.resource})
               <-[:ABOUT]-(n:ApiAtlasMemory {project: $project})
RETURN e.key AS key, e.method AS method, e.path AS path, direct, collect(n {.id, .rank}) AS via
"""
