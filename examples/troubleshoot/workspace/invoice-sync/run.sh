#!/bin/sh
# InvoiceSync, one batch: check the ERP asset, then enqueue the batch in the configured queue.
# (A stand-in for the real automation: it talks to Orchestrator only through the `uip` CLI.)
set -eu
here=$(dirname "$0")
field() { sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" "$here/config.json"; }
folder=$(field folder)
queue=$(field queue)
asset=$(field api_url_asset)

uip or assets get "$asset" --folder "$folder" --output json >/dev/null
uip or queue-items add --queue "$queue" --folder "$folder" --reference INV-BATCH-1130
