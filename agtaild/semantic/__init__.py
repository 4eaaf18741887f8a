"""Search by meaning: a derived store of vectors beside the full-text index, filled in the background.

Optional and never on the full-text index's critical path: nothing here runs unless the user
configured a backend (``<data dir>/semantic.json``, docs/semantic.md), numpy is imported only
by the modules that compute (the ``semantic`` extra), and the index never imports this package.
A missing model, a failing endpoint or a half-built store leaves full-text search as it was.

    settings.py   what the user configured (backend, model, endpoint), read from semantic.json
    embedders.py  the Embedder interface and the checks of every answer
    backends.py   opening the configured embedder
    endpoint.py   an OpenAI-compatible /v1/embeddings client (batching, timeouts, checks)
    static.py     the local static model (model2vec layout: tokenizer.json + int8 embeddings)
    texts.py      what of an event is embedded (prompts, answers, tool-call summaries), masked, chunked
    store.py      the vector store: a SQLite file of int8 BLOBs keyed to index ids and the model
    knn.py        nearest neighbours with numpy over the store: exact, or an inverted file when large
    engine.py     the pieces together: status, a build pass, the background embedder

Layer rule: this package sits beside the index (layer 3): it imports the foundation, the
config, the secrets and the index's read helpers, never the query layer or anything above it;
the index never imports it.
"""
