"""The memory review: what the team's project memory means for an answer.

Between ranking and the answer: which recalled and linked memories the answer uses and which
may lead it (:mod:`~apiatlas.rag.review.relevance`), how the answer follows them where they
disagree with the docs (:mod:`~apiatlas.rag.review.precedence`), and, when a memory is
written, the earlier ones it repeats or contradicts (:mod:`~apiatlas.rag.review.touches`).
Storage stays in :mod:`apiatlas.rag.memory`; the answer's wording of it is
:mod:`apiatlas.rag.answer.team`.
"""
