"""Embedded demo corpus: 16 distinct topics, hand-written sentences, labelled docs.

``make_corpus`` mixes 1-3 topics per document, so the topic labels give exact
answer sets for logical queries over the topics' term phrases (see
:mod:`itlr_gpu.synthetic`).
"""

from .corpus import load_topics, make_corpus, topic_terms

__all__ = ["load_topics", "make_corpus", "topic_terms"]
