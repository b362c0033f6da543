"""Does the verifier pick the expected endpoint among the ranker's top 3 more often than the
ranker's own first? Answerable dev cases only; the scores are score.py's ``--cache`` file.

    .venv/bin/python experiments/2026-11-28-verifier/rerank.py SCORES.json
"""

import json
import pickle
import sys

import numpy as np
sys.path.insert(0, 'experiments/2026-11-28-verifier')
sys.path.insert(0, 'experiments/2026-11-27-abstention')
from score import probabilities
d = pickle.load(open('.apiatlas/abstention/pools.pkl', 'rb'))
train, held = d['train'], d['validation']
probs = probabilities(train, held)
scores = json.load(open(sys.argv[1]))
for part, exs, prs in (('training dev', train, probs[:len(train)]),
                       ('validation', held, probs[len(train):])):
    r = v = n = 0
    for ex, pr in zip(exs, prs):
        if not ex.case.answerable or not pr:
            continue
        order = list(np.argsort(-np.asarray(pr))[:3])
        s = [scores[f"{ex.dataset}|{ex.case.id}|{ex.pool.refs[i].key}"] for i in order]
        n += 1
        r += ex.labels[order[0]] == 1
        v += ex.labels[order[int(np.argmax(s))]] == 1
    print(f"{part}: {n} answerable; ranker top1 {r}, "
          f"verifier's pick of the ranker's top 3 {v}")
