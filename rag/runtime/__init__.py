"""The model runtime: the packaged encoder on ONNX Runtime (sessions, tokenizers), the
embeddings every store and ranker uses, their query cache, and the thread settings a question
runs under. The retrievers and the ranker use it; it knows nothing of them."""
