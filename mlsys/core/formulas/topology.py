"""Bisection bandwidth and distance of direct and indirect network topologies.

A topology's *bisection* is the fewest links a cut into two equal halves severs; the
traffic one half can send the other at once is bounded by it. Relative to a full
bisection (``N/2`` links, each node able to send to the far half at its link rate), a
bidirectional ring of ``N`` nodes keeps ``2`` links, a ``k × k × k`` torus ``2k²`` (its
wrap-around links double the mesh's ``k²``) and a non-blocking fat tree all ``N/2``
(Dally & Towles 2004, Sec. 3.3; Leiserson 1985).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from mlsys.core.errors import ParameterError

__all__ = ["bisection_fraction", "mean_hops"]

_TOPOLOGIES = ("fat_tree", "ring", "torus_3d")


def _check(topology: str) -> str:
    if topology not in _TOPOLOGIES:
        raise ParameterError("topology", topology, f"one of {list(_TOPOLOGIES)}")
    return topology


def _ret(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else x


def bisection_fraction(topology: str, nodes: ArrayLike) -> float | np.ndarray:
    """Bisection links over those of a full bisection (``N/2``).

    ``fat_tree``: 1 (non-blocking); ``ring``: ``2 / (N/2) = 4/N``; ``torus_3d`` with
    ``N = k³``: ``2k² / (N/2) = 4 N^(-1/3)``.

    Parameters
    ----------
    topology : str
        ``"fat_tree"``, ``"ring"`` or ``"torus_3d"``.
    nodes : int or ndarray
        Nodes ``N`` (a cube for the torus; others use the same formula).

    Returns
    -------
    float or ndarray
        Dimensionless, at most 1.

    References
    ----------
    Dally & Towles (2004), "Principles and Practices of Interconnection Networks",
    Morgan Kaufmann, Sec. 3.3 (bisection of rings and k-ary n-cubes: ``4N/k`` channels,
    ``2N/k`` bidirectional links); Leiserson (1985), "Fat-Trees: Universal Networks for
    Hardware-Efficient Supercomputing", IEEE Trans. Computers C-34(10).

    Examples
    --------
    64 nodes: a ring keeps 4/64 = 6.25% of a full bisection, a 4×4×4 torus 4/4 = 100%
    (32 links), a 512-node 8×8×8 torus 50%.

    >>> bisection_fraction("ring", 64), bisection_fraction("torus_3d", 512)
    (0.0625, 0.5)
    """
    n = np.asarray(nodes, dtype=float)
    kind = _check(topology)
    if kind == "fat_tree":
        return _ret(np.ones_like(n))
    if kind == "ring":
        return _ret(np.minimum(4.0 / n, 1.0))
    return _ret(np.minimum(4.0 * np.cbrt(n) ** -1.0, 1.0))


def mean_hops(topology: str, nodes: ArrayLike, tree_levels: int = 3) -> float | np.ndarray:
    """Average links a packet crosses between two nodes, under uniform traffic.

    ``ring``: ``N/4`` (minimal routing; each distance up to ``N/2``, averaged over all
    destinations including the source); ``torus_3d``: ``3 · k/4`` with ``k = N^(1/3)``
    (one ring per dimension); ``fat_tree``: ``2 (levels − 1)``, up to the top switch
    level and back down, between switches of different pods.

    Parameters
    ----------
    topology : str
        ``"fat_tree"``, ``"ring"`` or ``"torus_3d"``.
    nodes : int or ndarray
        Nodes ``N``.
    tree_levels : int
        Switch levels of the fat tree (3 for a pod-based Clos).

    Returns
    -------
    float or ndarray
        Hops.

    References
    ----------
    Dally & Towles (2004), "Principles and Practices of Interconnection Networks",
    Sec. 3.2 (average minimal distance of a k-ary n-cube, ``n k/4`` for even ``k``);
    Al-Fares, Loukissas & Vahdat (2008), "A Scalable, Commodity Data Center Network
    Architecture", SIGCOMM (three-level fat tree: edge-aggregation-core and back).

    Examples
    --------
    A 64-node ring averages 16 hops, a 4×4×4 torus 3, a three-level fat tree 4.

    >>> mean_hops("ring", 64), mean_hops("torus_3d", 64), mean_hops("fat_tree", 64)
    (16.0, 3.0, 4.0)
    """
    n = np.asarray(nodes, dtype=float)
    kind = _check(topology)
    if kind == "ring":
        return _ret(n / 4.0)
    if kind == "torus_3d":
        return _ret(0.75 * np.cbrt(n))
    return _ret(np.full_like(n, 2.0 * (tree_levels - 1)))
