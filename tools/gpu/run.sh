#!/bin/bash
# On the GPU machine: Vulkan loader, IREE runtime, then the measurements (args: cases).
set -u
for f in .gpu/gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:.gpu/src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 .gpu/gpu_bench.py "$@" 2>&1 | tee $OUT/gpu.log
