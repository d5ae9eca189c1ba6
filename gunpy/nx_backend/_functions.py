"""The networkx functions gunpy answers, each with a line on how (networkx's backend info).

No imports: networkx reads this table (through :func:`gunpy.nx_backend.get_info`) while it
is itself being imported.
"""

_FUNCTIONS = {
    "bfs_edges": "BFS tree edges in networkx's order (reverse=, depth_limit= supported)",
    "generic_bfs_edges": "bfs_edges, where neighbors= is None or the graph's own neighbors / "
                         "successors / predecessors (reversed) (depth_limit= supported; other "
                         "neighbour functions left to networkx)",
    "bfs_layers": "BFS layers in networkx's order",
    "single_source_shortest_path_length": "BFS depths (cutoff= supported)",
    "single_source_dijkstra_path_length": "SSSP distances with near/far delta-stepping, in "
                                          "networkx's pop order (positive Python ints and "
                                          "floats whose path sums float64 holds exactly)",
    "bfs_tree": "networkx's DiGraph of bfs_edges (reverse=, depth_limit= supported)",
    "bfs_predecessors": "bfs_edges' pairs reversed, in networkx's order (depth_limit= supported)",
    "bfs_successors": "bfs_edges grouped by parent, in networkx's order (depth_limit= supported)",
    "descendants_at_distance": "the vertices at one BFS depth",
    "has_path": "one BFS from the source",
    "descendants": "one BFS from the source",
    "ancestors": "one BFS of the reversed graph",
    "node_connected_component": "one BFS from the node",
    "is_connected": "gunpy.cc's component count",
    "number_connected_components": "gunpy.cc's component count",
    "is_weakly_connected": "gunpy.cc's component count",
    "number_weakly_connected_components": "gunpy.cc's component count",
    "single_source_shortest_path": "BFS parents in networkx's queue order (cutoff= supported)",
    "single_target_shortest_path_length": "BFS depths of the reversed graph (cutoff= supported)",
    "single_target_shortest_path": "BFS parents of the reversed graph in networkx's queue "
                                   "order (cutoff= supported)",
    "predecessor": "every BFS parent one level up, in networkx's queue order (target=, "
                   "cutoff=, return_seen= supported)",
    "all_pairs_shortest_path_length": "a BFS a node, each dict in networkx's order (a "
                                      "generator; cutoff= supported)",
    "all_pairs_dijkstra_path_length": "an SSSP a node, each dict in networkx's pop order (a "
                                      "generator; cutoff= supported; weights as for "
                                      "single_source_dijkstra_path_length)",
    "all_pairs_dijkstra": "an SSSP a node: single_source_dijkstra's lengths and paths (a "
                          "generator; cutoff= supported; weights as for "
                          "single_source_dijkstra_path_length)",
    "all_pairs_dijkstra_path": "the same, paths only",
    "all_pairs_bellman_ford_path_length": "single_source_bellman_ford_path_length a node (a "
                                          "generator; int and float weights mixed: every "
                                          "source answered before the first is yielded)",
    "all_pairs_bellman_ford_path": "single_source_bellman_ford_path a node (a generator; "
                                   "unequal weights: every source answered before the first "
                                   "is yielded, so equal paths anywhere are left to networkx "
                                   "at the call)",
    "bidirectional_shortest_path": "networkx's path: a BFS from each end gives the levels "
                                   "its search expands and the node where its fringes meet, "
                                   "both sides' queue parents the path",
    "all_pairs_shortest_path": "a BFS a node, paths in networkx's queue order (a generator; "
                               "cutoff= supported)",
    "average_shortest_path_length": "a BFS (weight=: an SSSP) a node, networkx's sum in its "
                                    "order; gunpy.scc / gunpy.cc for the connectivity check "
                                    "(floyd-warshall methods left to networkx)",
    "global_efficiency": "a BFS a node, networkx's sum of inverse distances in its order",
    "shortest_path": "with a source and no target: single_source_shortest_path, "
                     "single_source_dijkstra_path or single_source_bellman_ford_path; a "
                     "source and a target: bidirectional_shortest_path (weight=None) or "
                     "bellman_ford_path (Dijkstra's bidirectional search to a target, or "
                     "no source, left to networkx)",
    "shortest_path_length": "with a source: BFS or SSSP lengths (a target too; no source left "
                            "to networkx)",
    "single_source_dijkstra": "SSSP distances, paths rebuilt in networkx's pop order (target=, "
                              "cutoff= supported; weights as for the lengths)",
    "single_source_dijkstra_path": "the same paths",
    "dijkstra_path": "the same path to the target",
    "dijkstra_path_length": "SSSP distance to the target",
    "multi_source_dijkstra": "as single_source_dijkstra, for one source (several left to "
                             "networkx)",
    "multi_source_dijkstra_path": "the same, paths only",
    "multi_source_dijkstra_path_length": "the same, lengths only",
    "bellman_ford_path_length": "SSSP distance (non-negative weights with exact sums: ints, "
                                "dyadic floats; int and float mixed: the path's type, equal "
                                "paths left to networkx)",
    "single_source_bellman_ford_path_length": "SSSP distances: every weight the same, in "
                                              "networkx's FIFO order (BFS's); otherwise "
                                              "non-negative weights with exact sums, keys in "
                                              "distance order",
    "single_source_bellman_ford": "the same distances, paths from BFS parents in networkx's "
                                  "queue order, or from the tight in-edges where each vertex "
                                  "has one (equal paths left to networkx; target= supported)",
    "single_source_bellman_ford_path": "the same paths",
    "bellman_ford_path": "the same path to the target",
    "bellman_ford_predecessor_and_distance": "networkx's predecessor lists (BFS parents one "
                                             "level up, in its queue order; unequal weights: "
                                             "each node's one tight predecessor, ties left to "
                                             "networkx) and the same distances",
    "betweenness_centrality": "Brandes BC over all sources, or k sampled as networkx samples "
                              "them (its seed) and rescaled as networkx does (weight=None)",
    "edge_betweenness_centrality": "Brandes from every source (k sampled as networkx samples "
                                   "them), gunpy.bc's forward phase and dependencies a "
                                   "source, each tight edge's share as networkx adds it, "
                                   "networkx's rescaling (weight=None; multigraphs left to "
                                   "networkx)",
    "connected_components": "ECL-CC union-find hooking with Afforest sampling",
    "weakly_connected_components": "the same on directed graphs",
    "strongly_connected_components": "gunpy.scc (Multistep: trimming, forward-backward, "
                                     "colouring); sinks of the condensation first, as "
                                     "networkx's (a reverse topological order), ties by "
                                     "smallest node index",
    "number_strongly_connected_components": "gunpy.scc's component count",
    "is_strongly_connected": "gunpy.scc's component count",
    "condensation": "networkx's graph, numbered in scc's order (gunpy's "
                    "strongly_connected_components when scc=None), its edges found with NumPy",
    "closeness_centrality": "a BFS (distance=: an SSSP) to each node, networkx's sums in its "
                            "order (u=, wf_improved= supported)",
    "harmonic_centrality": "a BFS (distance=: an SSSP) from each source, networkx's sums in its "
                           "order (nbunch=, sources= supported)",
    "eccentricity": "a BFS (weight=: an SSSP) from each node (v= supported; sp= left to "
                    "networkx)",
    "degree_centrality": "gunpy.spmv of ones (the degrees) over n - 1 (multigraphs left to "
                         "networkx)",
    "in_degree_centrality": "gunpy.spmv of ones over the reverse graph, over n - 1 "
                            "(multigraphs left to networkx)",
    "out_degree_centrality": "gunpy.spmv of ones, over n - 1 (multigraphs left to networkx)",
    "pagerank": "power iteration, push or pull; personalization=, dangling= and nstart= "
                "supported (negative, NaN or infinite weights left to networkx)",
    "triangles": "degree-ordered orientation + segmented intersection (nodes= supported)",
    "transitivity": "triangles over triads; directed graphs: networkx's successor-set count",
    "clustering": "gunpy.lcc (intersections + a normalising neighbour reduction); undirected, "
                  "unweighted",
    "average_clustering": "the mean of clustering's values (count_zeros= supported); "
                          "undirected, unweighted",
    "louvain_communities": "gunpy.louvain (vertices move in seeded buckets, not one at a time): "
                           "the partition can differ from networkx's, its modularity is about "
                           "the same (networkx's modularity of it is what gunpy reports); "
                           "seeded by the call's seed; undirected graphs, multigraphs' parallel "
                           "edges summed; weight=None and max_level= are left to networkx "
                           "(its tests pin their exact partitions)",
    "core_number": "gunpy.kcore (peeling: a filter a level, atomic degree decrements in an "
                   "advance a round); graphs with self-loops left to networkx (it raises)",
    "k_edge_components": "k = 1: gunpy.cc (gunpy.scc when directed); k = 2, undirected: the "
                         "components less the bridges, found by Tarjan-Vishkin's subtree "
                         "test on a gunpy.bfs forest (k >= 3, directed k = 2 left to "
                         "networkx)",
    "lowest_common_ancestor": "networkx's steps on gunpy's traversals: gunpy.scc for the DAG "
                              "check, a BFS of the reversed graph per node for its ancestors "
                              "(a set built in networkx's order), networkx's walk down",
    "k_truss": "edges in fewer than k - 2 triangles dropped round by round, each round's "
               "supports one intersect call (C<A> = A plus.pair A^T); networkx's copy less "
               "them and the nodes left bare",
    "k_core": "networkx's subgraph of gunpy.kcore's core numbers (core_number= left to networkx)",
    "k_shell": "the same",
    "k_crust": "the same",
    "k_corona": "the same",
    "hits": "gunpy.hits (the power iteration, two neighbour reductions an iteration): networkx's "
            "values where the largest singular value is simple (ARPACK's vector is arbitrary "
            "where it is repeated); nstart=, normalized=False, multigraphs, graphs without "
            "edges, negative, NaN or infinite weights and runs that do not converge are left "
            "to networkx",
    "minimum_spanning_edges": "gunpy.mst (Borůvka's rounds) given networkx's edge order for "
                              "ties: Kruskal's forest edge for edge, in its order; "
                              "algorithm='boruvka' where weights are distinct; prim, NaN "
                              "weights, multigraphs left to networkx",
    "minimum_spanning_tree": "the same forest, in networkx's graph (attributes kept)",
    "isolates": "nodes with no out- or in-edge: gunpy.spmv degrees (a generator, in node "
                "order)",
    "number_of_isolates": "the same count",
    "is_isolate": "the node's row and in-degree (nodes not in the graph left to networkx)",
    "number_of_selfloops": "edges u -> u in the CSR (multigraphs left to networkx)",
    "is_negatively_weighted": "any negative weight (edge= and multigraphs left to networkx)",
    "reciprocity": "each edge's reverse found by a sorted search of the edge keys; nodes= "
                   "a node or an nbunch, as networkx",
    "overall_reciprocity": "the same search: reciprocated edges over all edges",
    "is_forest": "edges == nodes - gunpy.cc's component count (weak components when "
                 "directed; multigraphs left to networkx)",
    "is_tree": "edges == nodes - 1 and gunpy.cc's one component (multigraphs left to "
               "networkx)",
    "is_branching": "is_forest and every in-degree (gunpy.spmv over the reverse graph) at "
                    "most 1 (multigraphs left to networkx)",
    "is_arborescence": "is_tree and every in-degree at most 1 (multigraphs left to networkx)",
    "resource_allocation_index": "gunpy's intersect operator on a mask graph of the pairs "
                                 "(chunks of 65,536, so the generator stays lazy): each "
                                 "common neighbour's 1 / degree, summed in vertex order "
                                 "(networkx's set order may differ in the last bits); "
                                 "ebunch=None: nx.non_edges' pairs and order",
    "jaccard_coefficient": "the same intersections: common neighbours over the union "
                           "(the whole intersection from the operator's counts)",
    "adamic_adar_index": "the same intersections, 1 / log(degree) summed (a common neighbour "
                         "of degree 1 raises ZeroDivisionError at its pair, as networkx)",
    "preferential_attachment": "the product of networkx's degrees (self-loops twice), "
                               "chunk by chunk",
    "common_neighbor_centrality": "the same intersections' counts and a BFS from each "
                                  "pair's first node (alpha=1: the counts alone)",
    "eigenvector_centrality": "networkx's power iteration (x + A^T x, normalised), one "
                              "gunpy.spmv over the transpose an iteration, networkx's "
                              "start and convergence test (nstart= a number for every "
                              "node; NaN, infinite or NumPy weights left to networkx)",
    "katz_centrality": "networkx's iteration alpha A^T x + beta, one gunpy.spmv an "
                       "iteration, its test and scaling (beta= a number or a dict of every "
                       "node's, nstart= as eigenvector_centrality's)",
    "ego_graph": "networkx's subgraph copy of the nodes gunpy.bfs reaches within radius "
                 "(distance=: gunpy.sssp's, weights as Dijkstra's; undirected=True: a BFS of "
                 "the edges both ways; distance= with undirected=True on a directed graph "
                 "left to networkx)",
    "complement": "the edges networkx's loop adds, in its order, from a NumPy mask of the "
                  "CSR a block of rows at a time (multigraphs left to networkx)",
    "reverse": "networkx's graph: each CSR edge turned round, in networkx's edge order, "
               "attributes deep-copied (copy=False and multigraphs left to networkx)",
    "average_neighbor_degree": "gunpy.spmv of the target degrees over the graph and its "
                               "transpose (the neighbours' sums) over gunpy.spmv's source "
                               "degrees (nodes= a single node, multigraphs, NaN, infinite "
                               "or NumPy weights left to networkx)",
    "average_degree_connectivity": "the same neighbour sums, grouped by degree with NumPy in "
                                   "networkx's order (weights: Python ints only; "
                                   "multigraphs left to networkx)",
    "is_empty": "the converted graph's edge count",
    "voterank": "networkx's rounds with NumPy: each vote the sum of the voters' abilities "
                "in the order networkx's edge loop adds them (its floats and ties), the "
                "first largest elected (multigraphs left to networkx)",
    "square_clustering": "the wedge counts |N(v) & N(x)| with NumPy (a block of rows at a "
                         "time): networkx's integer squares, triangles and potential "
                         "(directed graphs left to networkx)",
}
