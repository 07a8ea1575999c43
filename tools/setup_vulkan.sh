#!/usr/bin/env bash
# The Vulkan tests need a Vulkan loader and an ICD; Mesa's lavapipe runs Vulkan on the CPU.
# tests/backend/test_spirv_valid.py needs spirv-val (SPIRV-Tools) to check every kernel.
# Installs Debian's mesa-vulkan-drivers, libvulkan1 and spirv-tools when they are missing.
# Without root (or without apt-get) it says what to install and leaves those tests to skip with
# that reason, except under CI=true, where the tests turn a missing device or spirv-val into a
# failure.
set -euo pipefail

has_vulkan() {
    ldconfig -p | grep -q 'libvulkan\.so\.1' && ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1
}

has_vulkan && command -v spirv-val >/dev/null && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "note: install mesa-vulkan-drivers, libvulkan1 and spirv-tools to run the Vulkan tests" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends mesa-vulkan-drivers libvulkan1 spirv-tools
