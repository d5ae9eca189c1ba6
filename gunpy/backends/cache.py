"""What backends keep for one graph: :class:`DeviceCache` (``Graph._device``)."""

__all__ = ["DeviceCache"]


class DeviceCache:
    """What backends keep for one graph, dropped together when its arrays are rebound.

    * each backend object's copy of the graph (:class:`gunpy.backends.base.DeviceGraph`):
      :meth:`graph` / :meth:`keep_graph`; keyed by the object, never its name (two
      backends called "cuda" get separate copies);
    * arrays a backend derives from the graph once (an enactor's all-vertex or
      all-edge ids): :meth:`array`, keyed by (backend object, name);
    * facts about the host arrays checked once (intersect's "neighbour lists are
      sorted"): :meth:`knows` / :meth:`learn`.

    ``len(cache)`` counts all three; :meth:`clear` (``Graph.release_device``, or
    rebinding an array) drops them.
    """

    def __init__(self):
        self._graphs = {}
        self._arrays = {}
        self._facts = set()

    def graph(self, backend):
        """``backend``'s copy of the graph, or None."""
        return self._graphs.get(backend)

    def keep_graph(self, backend, device_graph):
        self._graphs[backend] = device_graph
        return device_graph

    def backends(self):
        """The backend objects holding a copy."""
        return list(self._graphs)

    def array(self, backend, name, make):
        """The array ``name`` of ``backend``, made by ``make()`` on first use."""
        key = (backend, name)
        arr = self._arrays.get(key)
        if arr is None:
            arr = self._arrays[key] = make()
        return arr

    def arrays(self):
        """``[(backend, name)]`` of the derived arrays held."""
        return list(self._arrays)

    def knows(self, fact):
        return fact in self._facts

    def learn(self, fact):
        self._facts.add(fact)

    def clear(self):
        self._graphs.clear()
        self._arrays.clear()
        self._facts.clear()

    def __len__(self):
        return len(self._graphs) + len(self._arrays) + len(self._facts)

    def __contains__(self, backend):
        return backend in self._graphs
