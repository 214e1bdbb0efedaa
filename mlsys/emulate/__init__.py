"""Real parallelism on CPU processes, measured against mlsys's formulas (needs torch).

``mlsys.emulate`` is the optional ``[emulate]`` extra: it starts ``N`` ranks as local
processes joined by ``torch.distributed`` (gloo, loopback only) and runs

* collectives written from point-to-point sends, whose bytes are measured
  (:mod:`mlsys.emulate.comm`, :mod:`mlsys.emulate.collectives`);
* tensor-parallel matmuls under every sharding policy of
  :mod:`mlsys.core.formulas.sharding`, explicitly and with DTensor, and a Megatron MLP
  block forward and backward (:mod:`mlsys.emulate.tp`);
* a pipeline-parallel MLP under GPipe and 1F1B (:mod:`mlsys.emulate.pipeline`);

each printed next to the formula it tests (``mlsys emulate ...``,
:mod:`mlsys.emulate.cli`). The cluster itself is :mod:`mlsys.emulate.cluster`.

Importing this package does not import torch; its submodules do.
"""

from __future__ import annotations

__all__: list[str] = []
