#!/usr/bin/env bash
# Fills .carry/ (git-ignored) with the header-only and static dependencies that the GPU machines
# lack (nlohmann-json, CLI11, rapidcheck; jemalloc's static library), copied from this Debian
# machine's packages, so a build there needs no network. Pass `.carry` in the device tool's `carry` list.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .carry && mkdir -p .carry/include .carry/lib
cp -r /usr/include/nlohmann /usr/include/CLI /usr/include/rapidcheck /usr/include/rapidcheck.h .carry/include/
cp /usr/lib/x86_64-linux-gnu/librapidcheck.a .carry/lib/
cp /usr/lib/x86_64-linux-gnu/libjemalloc_pic.a .carry/lib/libjemalloc.a
du -sh .carry
