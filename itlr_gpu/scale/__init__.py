"""Scaling out: out-of-core shards, sharded index files, Ray, resumable bulk jobs, reranking.

* :mod:`.shards`      shard planning, exact top-k merge, sharded index files,
                       :func:`~.shards.search_out_of_core` (stream a memory-mapped
                       matrix through the CPU or a GPU, double-buffered).
* :mod:`.distributed` :func:`~.distributed.search_ray`: one Ray task per
                       (query batch, shard), merged exactly.
* :mod:`.bulk`        batched jobs writing a partitioned Parquet/Arrow dataset
                       that resumes after an interruption.
* :mod:`.rerank`      score given (query, document) candidates.
* :mod:`.cli`         the ``itlr search`` options and the ``itlr rerank`` command.

Everything here orders results as a single in-memory run does (score descending, ties to the lower document
row), and its scores agree with that run's to float32 rounding, not bit for bit: the BLAS rounds a block's dot
products as its blocking falls, so two documents whose scores lie within that rounding (identical documents,
near-ties) may swap places; every other position holds the same document.
"""

__all__ = ["ShardedIndex", "load_index", "merge_topk", "plan_shards", "save_sharded", "search_out_of_core",
           "slice_program"]


def __getattr__(name):
    # Lazy, so ``itlr_gpu.cli`` can import ``itlr_gpu.scale.cli`` without loading torch.
    if name in __all__:
        from . import shards

        return getattr(shards, name)
    raise AttributeError(name)
