#!/usr/bin/env bash
# GPU scoring benchmark for one H100/H200: the reference's naive scoring vs lsplits on a
# gpt2-medium-sized model with random weights (no download). Prints examples/s, tokens/s, ratios
# and model FLOP utilisation; see benchmarks/gpu_scoring.py for the rows and the FLOP count.
#
#   benchmarks/gpu_scoring.sh [--boolq-n 6000] [--snli-n 20000] [--no-compile] [--peak-tflops 989.4]
#
# PYTHON selects the interpreter (default: .venv/bin/python, else python); it needs torch with CUDA,
# transformers and this repository's dependencies. Stopped after 8 minutes whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python)}
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader || true
PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}" exec timeout 480 "$PYTHON" benchmarks/gpu_scoring.py "$@"
