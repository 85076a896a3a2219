#!/bin/bash
# Session 15, lease 10 (one call): lease 8's probe again, with the f16 loop's low and high planes as two chains.
bash docs/runs/2026-12-02-s15-lease8.sh
