"""Test-only helpers that more than one test module uses: oracles' building blocks, and
functors with the set-ups that run them."""

import numpy as np


def row_stochastic(G):
    """``(P, S)``: G's adjacency matrix with each row divided by its sum, and the row sums
    (0 for a dangling vertex, whose row stays 0), as networkx's _pagerank_scipy builds them."""
    A = G.to_scipy()
    S = np.asarray(A.sum(axis=1)).ravel()
    inv = np.divide(1.0, S, out=np.zeros(G.num_vertices), where=S != 0)
    return (A.T.multiply(inv)).T.tocsr(), S
