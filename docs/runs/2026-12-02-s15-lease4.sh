#!/bin/bash
# Session 15, lease 4 (one call): decode log 33 again, lease 3's script on a binary whose last block adds its outputs
# with the loads of four segments in flight at once (lease 3's added them one output at a time).
LEASE_CHANGE="+log33b" bash docs/runs/2026-12-02-s15-lease3.sh
